"""`hybridGateway` → the parts of one listener, each taking the connections its matcher
picks (source ranges, SNI names) and serving them over HTTP (VirtualServices) or TCP.

The parts are written inline (`matchedGateways`), or, when there are none, selected from
MatchableHttpGateway and MatchableTcpGateway resources (`matchable.py`). Two parts may not
take the same connections — Envoy would refuse the listener — so identical matchers, and a
TCP host or a plain HTTP part claiming the SNI name and source range of another, reject
the Gateway here; a TLS VirtualService claiming another part's connections is rejected by
`check_part_conflicts` once the virtual hosts are placed (the Gateway keeps serving).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gw import api
from gw.api import ResourceKey
from gw.api.http_gateway import HttpGateway
from gw.api.hybrid import HybridGateway, MatchedGateway, Matcher
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.hybrid_matcher import Matched, build_matcher
from gw.translator.gateway.matchable import Part, delegated_parts
from gw.translator.gateway.tcp import TcpContext, build_tcp_listener, host_claims
from gw.translator.gateway.tls import ANY_SNI, sni_claims
from gw.translator.reports import Reports, ResourceReport

if TYPE_CHECKING:
    from gw.translator.gateway.gateways import GatewayListener

FIELD = "spec.hybridGateway"
EMPTY = "hybrid gateway does not have any populated matched gateways"
#: Builds an HTTP part: (its httpGateway, TLS or not, the manifest path of the httpGateway,
#: the resource holding it, its report, the placement role of its virtual hosts).
HttpPart = Callable[
    [HttpGateway, bool, str, ResourceKey, ResourceReport, str], "GatewayListener | None"
]
#: A connection a filter chain takes: (source range or None for any, SNI name or `*`).
Claim = tuple[tuple[str, int] | None, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchedSection:
    """One part of a hybrid listener as stage 1 holds it until the Proxy is assembled."""

    #: Its own listener name (route configuration and statistics names derive from it).
    name: str
    #: How findings name it: `matchedGateways[1]`, `MatchableTcpGateway ns.name`.
    label: str
    matched: Matched
    #: The Matchable*Gateway it comes from; None when inline.
    source: ir.SourceRef | None = None
    http: GatewayListener | None = None
    tcp: ir.TcpListener | None = None

    def fixed_claims(self) -> set[Claim]:
        """The connections it takes whatever VirtualServices exist (a TLS HTTP part's
        depend on its VirtualServices' SNI names: see `check_part_conflicts`)."""
        ranges = self.matched.match.source_ranges or (None,)
        if self.tcp is not None:
            return {(r, n) for r in ranges for h in self.tcp.hosts for n in host_claims(h)}
        if self.matched.tls is None:
            return {(r, ANY_SNI) for r in ranges}
        return set()


@dataclass(slots=True, kw_only=True)
class HybridContext:
    """What building one Gateway's parts needs besides the Gateway."""

    tcp: TcpContext
    reports: Reports
    listener_name: str
    role: str
    http_part: HttpPart
    #: The Matchable*Gateways built as parts of some Gateway (shared across Gateways).
    selected: set[ResourceKey]


def build_hybrid(gateway: api.Gateway, context: HybridContext) -> tuple[MatchedSection, ...] | None:
    """The parts of the listener (() when delegated parts select nothing: warned, no
    listener), or None after reporting errors on the Gateway."""
    hybrid = gateway.spec.hybrid_gateway or HybridGateway()
    report = context.tcp.report
    errors = len(report.errors)
    delegated = hybrid.delegated_http_gateways or hybrid.delegated_tcp_gateways
    if hybrid.matched_gateways is not None:
        if delegated:
            report.warning(
                FIELD,
                "ignored: delegatedHttpGateways and delegatedTcpGateways are used only "
                "without matchedGateways",
            )
        if not hybrid.matched_gateways:
            report.error(f"{FIELD}.matchedGateways", EMPTY)
        parts: list[Part | None] = [
            _inline(i, m, context) for i, m in enumerate(hybrid.matched_gateways)
        ]
    elif delegated:
        parts = list(delegated_parts(hybrid, context.tcp.refs, context.reports, context.tcp.owner))
    else:
        report.error(
            FIELD,
            "a hybridGateway needs matchedGateways, or delegatedHttpGateways or "
            "delegatedTcpGateways",
        )
        parts = []
    built = [build_section(p, context) for p in parts if p is not None]
    sections = [s for s in built if s is not None]
    if delegated and hybrid.matched_gateways is None:
        context.selected.update(p.owner for p in parts if p is not None)
        if not any(parts) and len(report.errors) == errors:
            report.warning(FIELD, f"{EMPTY}: the delegated gateways select none")
    _check_conflicts(sections, report)
    if len(report.errors) > errors or len(sections) < len(built):
        return None  # a part reported on its own resource: the last accepted listener serves
    return tuple(sections)


def _inline(index: int, gateway: MatchedGateway, context: HybridContext) -> Part | None:
    field = f"{FIELD}.matchedGateways[{index}]"
    report = context.tcp.report
    if (gateway.http_gateway is None) == (gateway.tcp_gateway is None):
        report.error(field, "a matched gateway needs exactly one of httpGateway or tcpGateway")
        return None
    matcher = gateway.matcher or Matcher()
    return Part(
        matcher=build_matcher(
            matcher.source_prefix_ranges,
            matcher.ssl_config,
            matcher.passthrough_cipher_suites,
            tcp=gateway.tcp_gateway is not None,
            field=f"{field}.matcher",
            report=report,
        ),
        http=gateway.http_gateway,
        tcp=gateway.tcp_gateway,
        field=field,
        label=f"matchedGateways[{index}]",
        suffix=str(index),
        owner=context.tcp.owner,
        report=report,
    )


def build_section(part: Part, context: HybridContext) -> MatchedSection | None:
    """One part as built, or None after reporting (on the resource holding it)."""
    matcher = part.matcher
    if matcher is None:
        return None
    name, label, source = f"{context.listener_name}-{part.suffix}", part.label, part.source
    if part.http is not None:
        ssl = matcher.tls is not None
        role = f"{context.role}#{part.suffix}"
        where = f"{part.field}.httpGateway"
        http = context.http_part(part.http, ssl, where, part.owner, part.report, role)
        if http is None:
            return None
        return MatchedSection(name=name, label=label, matched=matcher, source=source, http=http)
    assert part.tcp is not None
    scope = dataclasses.replace(
        context.tcp, owner=part.owner, report=part.report, field=f"{part.field}.tcpGateway"
    )
    tcp = build_tcp_listener(part.tcp, scope, matcher.server_names)
    if tcp is None:
        return None
    return MatchedSection(name=name, label=label, matched=matcher, source=source, tcp=tcp)


def _check_conflicts(sections: list[MatchedSection], report: ResourceReport) -> None:
    """Identical matchers (the established rule), then overlapping fixed claims."""
    seen: dict[tuple[object, ...], MatchedSection] = {}
    claimed: dict[Claim, MatchedSection] = {}
    for section in sections:
        other = seen.setdefault(section.matched.key, section)
        if other is not section:
            report.error(
                FIELD,
                f"{section.label} has the same matcher as {other.label}: each matcher must be "
                "unique (an empty one takes every connection no other takes)",
            )
            continue
        for claim in sorted(section.fixed_claims(), key=str):
            taken = claimed.setdefault(claim, section)
            if taken is not section:
                report.error(
                    FIELD,
                    f"{section.label} and {taken.label} both take {_describe(claim)}: give "
                    "them different sourcePrefixRanges or SNI names",
                )


def _describe(claim: Claim) -> str:
    source, name = claim
    where = "from any source" if source is None else f"from {source[0]}/{source[1]}"
    what = "every connection" if name == ANY_SNI else f"connections for SNI {name}"
    return f"{what} {where}"


def check_part_conflicts(
    hosts: Mapping[ResourceKey, Contribution],
    gateways: Iterable[GatewayListener],
    reports: Reports,
) -> None:
    """A TLS VirtualService placed on a hybrid listener may not take the connections of
    another part (a TCP host, a plain HTTP part, a VirtualService of another TLS part):
    Envoy would refuse the listener. It is rejected, as two VirtualServices claiming one
    SNI name on the HTTPS listener are."""
    hybrids = [g for g in gateways if g.matched]
    if not hybrids:  # no hybrid gateway (most installs): nothing to check
        return
    by_role: dict[str, list[tuple[ResourceKey, ir.VirtualHost]]] = defaultdict(list)
    for key, contribution in sorted(hosts.items()):
        for role, vhost in contribution.virtual_hosts:
            by_role[role].append((key, vhost))
    for g in hybrids:
        owners: dict[Claim, set[tuple[str, str | ResourceKey]]] = defaultdict(set)
        for section in g.matched:
            for claim in section.fixed_claims():
                owners[claim].add((section.label, section.label))
            if section.http is None or section.matched.tls is None:
                continue
            ranges = section.matched.match.source_ranges or (None,)
            for key, vhost in by_role.get(section.http.role, []):
                for claim in {(r, n) for r in ranges for n in sni_claims(vhost)}:
                    owners[claim].add((section.label, key))
        _reject_sharers(owners, reports)


def _reject_sharers(
    owners: Mapping[Claim, set[tuple[str, str | ResourceKey]]], reports: Reports
) -> None:
    """Each virtual service sharing a claim with another part is rejected; two of one part
    are `tls.check_sni_conflicts`' to report."""
    for claim, sharing in sorted(owners.items(), key=str):
        for label, key in sorted(sharing, key=str):
            if not isinstance(key, ResourceKey):
                continue
            others = sorted(
                o if isinstance(o, str) else f"virtual service {o.namespace}.{o.name}"
                for other_label, o in sharing
                if other_label != label
            )
            if not others:
                continue
            reports.of(key).error(
                "spec.sslConfig.sniDomains",
                f"gateway has conflicting sni domains [{claim[1]}]: {', '.join(others)} "
                f"{'takes' if len(others) == 1 else 'take'} {_describe(claim)} on the same "
                "hybrid gateway; give it another SNI name, or the parts other source ranges",
            )
