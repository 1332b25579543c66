"""Which contribution of each resource is served: the fresh one, or the last accepted one
while the resource is rejected (a typo never takes live routes away).

A fresh virtual host that claims a domain (or an SNI name) still held by a rejected
resource's last accepted version is rejected in turn: the one served keeps the claim.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from gw.api import ResourceKey
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.tls import sni_claims
from gw.translator.reports import Reports

SNI_CLAIM = "sni"
DOMAIN_CLAIM = "domain"

#: What a contribution holds exclusively on a listener: (listener role, kind, value).
Claim = tuple[str, str, str]


def choose_contributions(
    keys: Sequence[ResourceKey],
    fresh: Mapping[ResourceKey, Contribution],
    previous: Mapping[ResourceKey, Contribution],
    reports: Reports,
) -> dict[ResourceKey, Contribution]:
    """Each resource's contribution: the fresh one when it is not rejected, else the last
    accepted one (`keys` sorted: the contributions come in their order)."""
    chosen: dict[ResourceKey, Contribution] = {}
    fallback: set[ResourceKey] = set()
    rejected = reports.rejected_among(keys)
    for key in keys:
        if key in rejected:
            if key in previous:
                chosen[key] = previous[key]
                fallback.add(key)
        elif key in fresh:
            chosen[key] = fresh[key]
    while True:
        held = {claim: key for key in fallback for claim in claims_of(chosen[key])}
        # nothing served from a last accepted version (most translations): nothing to clash
        clash = _first_clash(chosen, fallback, held) if held else None
        if clash is None:
            return chosen
        key, claim, holder = clash
        _report_clash(key, claim, holder, reports)
        del chosen[key]
        if key in previous:
            chosen[key] = previous[key]
            fallback.add(key)


def _report_clash(key: ResourceKey, claim: Claim, holder: ResourceKey, reports: Reports) -> None:
    _, kind, value = claim
    served = (
        f"still served by the last accepted version of virtual service "
        f"{holder.namespace}.{holder.name}, which is rejected"
    )
    if kind == SNI_CLAIM:
        reports.of(key).error(
            "spec.sslConfig.sniDomains",
            f"gateway has conflicting sni domains [{value}]: the name is {served}",
        )
    else:
        reports.of(key).error(
            "spec.virtualHost.domains",
            f"domain conflict: the [{value}] domain is {served}",
        )


def claims_of(contribution: Contribution) -> Iterator[Claim]:
    """(role, `domain`, domain) for each plain virtual host, (role, `sni`, name) for each
    SNI name of a TLS one."""
    for role, vhost in contribution.virtual_hosts:
        for domain in vhost.domains if vhost.tls is None else ():
            yield role, DOMAIN_CLAIM, domain
        for name in sni_claims(vhost):
            yield role, SNI_CLAIM, name


def _first_clash(
    chosen: Mapping[ResourceKey, Contribution],
    fallback: set[ResourceKey],
    held: Mapping[Claim, ResourceKey],
) -> tuple[ResourceKey, Claim, ResourceKey] | None:
    for key, contribution in sorted(chosen.items()):
        if key in fallback:
            continue
        for claim in claims_of(contribution):
            holder = held.get(claim)
            if holder is not None and holder != key:
                return key, claim, holder
    return None
