"""Stage 1: resources → Proxy.

The passes run in a fixed order, each reading the snapshot and writing findings:
input errors, gateways (the listeners), upstreams, virtual services (with routes, placed on
the listeners of the gateways that select them, then domain and SNI conflicts per
listener, and the clusters of services they address directly), then one generic
propagation of rejections along references. `assemble` then puts together what the
contributions of resources that are not rejected hold, and the last accepted
contributions of those that are; EDS clusters get the endpoints the snapshot holds now;
last, `proxies.py` splits it into one Proxy per proxy name.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterator, Mapping

from gw import api
from gw.api import ResourceKey
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.authconfig import build_auth_configs
from gw.translator.gateway.contribution import Contribution, ListenerRole
from gw.translator.gateway.endpoints import attach_endpoints
from gw.translator.gateway.extauth import build_extauth_server, check_extauth_server
from gw.translator.gateway.gateways import build_gateways
from gw.translator.gateway.hostcache import HostCache
from gw.translator.gateway.orch import add_service_clusters
from gw.translator.gateway.placement import (
    choose_gateways,
    place_virtual_hosts,
    warn_domain_conflicts,
    warn_empty_gateways,
)
from gw.translator.gateway.proxies import build_proxies
from gw.translator.gateway.ratelimit import (
    attach_rate_limits,
    build_ratelimit_server,
    check_ratelimit_server,
)
from gw.translator.gateway.ratelimitconfig import build_rate_limit_configs
from gw.translator.gateway.tls import check_sni_conflicts, sni_claims
from gw.translator.gateway.upstreams import build_upstreams
from gw.translator.gateway.virtualhosts import build_virtual_services, check_domain_conflicts
from gw.translator.options import Options
from gw.translator.refs import Edge, Refs, propagate_rejections
from gw.translator.reports import Reports
from gw.wire import extauth

__all__ = ["Contribution", "build_proxy"]

SETTINGS_NAME = "default"
SNI_CLAIM = "sni"
DOMAIN_CLAIM = "domain"


def build_proxy(
    snapshot: Snapshot,
    options: Options,
    reports: Reports,
    previous: Mapping[ResourceKey, Contribution],
    cache: HostCache | None = None,
) -> tuple[tuple[ir.Proxy, ...], dict[ResourceKey, Contribution], tuple[Edge, ...], HostCache]:
    """The Proxies for `snapshot` (the default one first), every resource's contribution as
    last accepted, every reference resolved on the way (for `gwctl check` and the admin
    API), and the host cache for the next translation."""
    broken = _report_input_errors(snapshot, reports)
    refs = Refs(snapshot.resources, broken)
    settings = _check_settings(snapshot, options, reports)
    require_rbac = bool(settings and settings.spec.rbac and settings.spec.rbac.require_rbac)
    contributions: dict[ResourceKey, Contribution] = {}
    gateway_listeners = build_gateways(
        snapshot, refs, reports, keep_empty=_translate_empty(settings)
    )
    gateways = choose_gateways(snapshot, broken, gateway_listeners, previous, reports, options)
    contributions.update(gateway_listeners)
    extauth_server, settings_key = build_extauth_server(snapshot, options, refs, reports)
    ratelimit_server, _ = build_ratelimit_server(snapshot, options, refs, reports)
    contributions.update(build_upstreams(snapshot, refs, reports, options))
    contributions.update(build_auth_configs(snapshot, options, refs, reports))
    contributions.update(build_rate_limit_configs(snapshot, reports))
    hosts, cache = build_virtual_services(
        snapshot, refs, reports, options, require_rbac=require_rbac, cache=cache
    )
    hosts = place_virtual_hosts(hosts, gateways, snapshot, options)
    warn_domain_conflicts(check_domain_conflicts(hosts, reports), gateways, reports)
    check_sni_conflicts(hosts, reports)
    contributions.update(hosts)
    check_extauth_server(snapshot, extauth_server, settings_key, refs, reports)
    check_ratelimit_server(snapshot, ratelimit_server, settings_key, refs, reports)
    add_service_clusters(contributions)
    propagate_rejections(refs, reports)
    keys = set(snapshot.resources) | broken
    accepted = _choose(keys, contributions, previous, reports)
    fresh = {k for k, c in accepted.items() if contributions.get(k) is c}
    whole, by_role = _assemble(accepted, fresh, options, extauth_server)
    warn_empty_gateways(gateways, by_role, reports)
    whole = attach_endpoints(whole, snapshot, reports)
    proxies = tuple(
        attach_rate_limits(p, accepted, ratelimit_server)
        for p in build_proxies(whole, by_role, gateways)
    )
    return proxies, accepted, tuple(refs.edges), cache


def _translate_empty(settings: api.Settings | None) -> bool:
    """Settings `gateway.translateEmptyGateways`: listen even with no virtual host."""
    gateway = settings.spec.gateway if settings is not None else None
    return bool(gateway and gateway.get("translateEmptyGateways") is True)


def _report_input_errors(snapshot: Snapshot, reports: Reports) -> set[ResourceKey]:
    """Manifests that did not parse: the resource they meant is rejected (a duplicate copy
    of a resource that parsed elsewhere only warns). Returns the keys of broken resources."""
    broken: set[ResourceKey] = set()
    for error in snapshot.errors:
        if error.key is None:
            continue
        where = str(error.source) if error.source else ""
        if error.key in snapshot.resources:
            reports.of(error.key).warning(where, error.message)
        else:
            reports.of(error.key).error(where, error.message)
            broken.add(error.key)
    return broken


def _check_settings(snapshot: Snapshot, options: Options, reports: Reports) -> api.Settings | None:
    """The Settings object that is read (`<namespace>.default`), if there is one."""
    read = None
    for settings in snapshot.of_kind(api.Settings):
        meta = settings.metadata
        if (meta.namespace, meta.name) != (options.namespace, SETTINGS_NAME):
            reports.of(settings.key).warning(
                "metadata",
                f"only Settings {options.namespace}.{SETTINGS_NAME} is read; this one is ignored",
            )
        else:
            reports.of(settings.key)  # Accepted
            read = settings
    return read


def _choose(
    keys: set[ResourceKey],
    contributions: Mapping[ResourceKey, Contribution],
    previous: Mapping[ResourceKey, Contribution],
    reports: Reports,
) -> dict[ResourceKey, Contribution]:
    """Each resource's contribution: the new one when it is not rejected, else the last
    accepted one. A new virtual host that claims a domain still served by a rejected
    resource's last accepted version is rejected too (the served one keeps the domain)."""
    chosen: dict[ResourceKey, Contribution] = {}
    fallback: set[ResourceKey] = set()
    for key in sorted(keys):
        if reports.rejected(key):
            if key in previous:
                chosen[key] = previous[key]
                fallback.add(key)
        elif key in contributions:
            chosen[key] = contributions[key]
    while True:
        held = {claim: key for key in fallback for claim in _claims(chosen[key])}
        clash = _first_clash(chosen, fallback, held)
        if clash is None:
            return chosen
        key, (_, kind, value), holder = clash
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
        del chosen[key]
        if key in previous:
            chosen[key] = previous[key]
            fallback.add(key)


Claim = tuple[str, str, str]


def _claims(contribution: Contribution) -> Iterator[Claim]:
    """What a contribution holds exclusively on each listener (role): (role, `domain`,
    domain) for each plain virtual host, (role, `sni`, name) for each SNI name of a TLS one."""
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
        for claim in _claims(contribution):
            holder = held.get(claim)
            if holder is not None and holder != key:
                return key, claim, holder
    return None


def _assemble(
    accepted: Mapping[ResourceKey, Contribution],
    fresh: set[ResourceKey],
    options: Options,
    extauth_server: ir.ExtAuthServer | None,
) -> tuple[ir.Proxy, dict[ListenerRole, list[ir.VirtualHost]]]:
    """Every cluster, secret and AuthConfig of the chosen contributions (as one Proxy
    without listeners), and the virtual hosts by the listener role they are placed on.

    A secret used both by a fresh contribution and by a rejected resource's last accepted
    one is served as it is now (the fresh ones come first), so a rotation reaches every
    virtual host that uses the secret."""
    by_role: dict[ListenerRole, list[ir.VirtualHost]] = defaultdict(list)
    clusters: dict[str, ir.Cluster] = {}
    secrets: dict[str, ir.TlsSecret] = {}
    auth_configs: list[extauth.AuthConfig] = []
    for _, contribution in sorted(accepted.items(), key=lambda kc: (kc[0] not in fresh, kc[0])):
        for role, vhost in contribution.virtual_hosts:
            if vhost.uses_extauth:
                vhost = dataclasses.replace(vhost, extauth_server=extauth_server)
            by_role[role].append(vhost)
        for cluster in contribution.clusters:
            clusters.setdefault(cluster.name, cluster)
        for secret in contribution.secrets:
            secrets.setdefault(secret.name, secret)
        auth_configs.extend(contribution.auth_configs)
    if extauth_server and not extauth_server.http and extauth_server.cluster in clusters:
        # The extauth server speaks gRPC: its cluster is HTTP/2 whatever the Upstream says.
        server_cluster = clusters[extauth_server.cluster]
        clusters[server_cluster.name] = dataclasses.replace(server_cluster, http2=True)
    whole = ir.Proxy(
        name=options.proxy_name,
        namespace=options.namespace,
        clusters=tuple(clusters[name] for name in sorted(clusters)),
        secrets=tuple(secrets[name] for name in sorted(secrets)),
        auth_configs=tuple(sorted(auth_configs, key=lambda a: a.config_id)),
    )
    return whole, by_role
