"""The accepted contributions → one Proxy per proxy name, each with only its gateways.

`assemble` puts every contribution served together, as one Proxy without listeners: each
cluster and secret once, the AuthConfigs and RateLimitConfigs, and the live parts attached
in this one place: gw's own servers on the hosts that call them (`servers.py`) and the
endpoints of the clusters that select a service port (`endpoints.py`). `build_proxies` then
splits it by proxy name.

The proxy `Options.proxy_name` (`gateway-proxy`, the deployment `gw up` and the install
run) always exists, with no listeners when no gateway names it, so that its Envoys stay up
with nothing to serve. Other proxies exist while some gateway names them.

Clusters and secrets: a proxy gets every one except those that only *other* proxies'
listeners use. So one proxy gets them all (as before gateways existed), an upstream no
route uses yet is ready on every proxy, and a reference this module does not know about
(a field not named `cluster`/`*_cluster`, `secret`/`*_secret`) errs on the side of serving
the cluster rather than leaving a proxy without it.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Any

from gw.api import ResourceKey
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution, ListenerRole
from gw.translator.gateway.endpoints import with_endpoints
from gw.translator.gateway.extauth_http import without_missing_cluster
from gw.translator.gateway.extauth_pass import with_passes
from gw.translator.gateway.gateways import GatewayListener
from gw.translator.gateway.placement import servable
from gw.translator.gateway.servers import Servers
from gw.translator.options import Options
from gw.translator.reports import Reports
from gw.wire import extauth, ratelimit


def assemble(
    accepted: Mapping[ResourceKey, Contribution],
    stale: Set[ResourceKey],
    servers: Servers,
    snapshot: Snapshot,
    options: Options,
    reports: Reports,
    gateways: tuple[GatewayListener, ...] = (),
    *,
    hosts: bool = True,
) -> tuple[ir.Proxy, dict[ListenerRole, list[ir.VirtualHost]]]:
    """Every cluster, secret and config of the chosen contributions (as one Proxy without
    listeners, named as the default proxy), and the virtual hosts by the listener role
    they are placed on (none without `hosts`: an incremental build keeps its own).

    A secret used both by a fresh contribution and by a rejected resource's last accepted
    one is served as it is now (the fresh ones come first), so a rotation reaches every
    virtual host that uses the secret."""
    by_role: dict[ListenerRole, list[ir.VirtualHost]] = defaultdict(list)
    clusters: dict[str, ir.Cluster] = {}
    secrets: dict[str, ir.TlsSecret] = {}
    auth_configs: list[extauth.AuthConfig] = []
    rate_limit_configs: list[ratelimit.RateLimitConfig] = []
    fits = servable(gateways)
    for contribution in _fresh_first(accepted, stale):
        for role, vhost in contribution.virtual_hosts if hosts else ():
            if fits(role, vhost):
                by_role[role].append(servers.attach(vhost))
        for cluster in contribution.clusters:
            clusters.setdefault(cluster.name, cluster)
        for secret in contribution.secrets:
            secrets.setdefault(secret.name, secret)
        auth_configs.extend(contribution.auth_configs)
        rate_limit_configs.extend(contribution.rate_limit_configs)
    passes = {a.config_id: a.session_pass for a in auth_configs if a.session_pass is not None}
    for role, vhosts in by_role.items():
        by_role[role] = [with_passes(without_missing_cluster(v, clusters), passes) for v in vhosts]
    grpc = servers.clusters() | _gateway_servers(gateways)
    served = []
    for name in sorted(clusters):
        cluster = with_endpoints(clusters[name], snapshot, reports)
        if name in grpc and not cluster.http2:
            cluster = dataclasses.replace(cluster, http2=True)
        served.append(cluster)
    whole = ir.Proxy(
        name=options.proxy_name,
        namespace=options.namespace,
        clusters=tuple(served),
        secrets=tuple(secrets[name] for name in sorted(secrets)),
        auth_configs=tuple(sorted(auth_configs, key=lambda a: a.config_id)),
        rate_limit_configs=tuple(sorted(rate_limit_configs, key=lambda c: c.config_id)),
    )
    return whole, by_role


def _fresh_first(
    accepted: Mapping[ResourceKey, Contribution], stale: Set[ResourceKey]
) -> list[Contribution]:
    """The contributions by key, the fresh ones first, then the last accepted ones of
    resources rejected now (`stale`). Keys sort as they are (no key function to call
    for each of 100,000 VirtualServices at a full build); `stale` is usually empty."""
    if not stale:
        return [accepted[k] for k in sorted(accepted)]
    fresh = sorted(k for k in accepted if k not in stale)
    last = sorted(k for k in stale if k in accepted)
    return [accepted[k] for k in (*fresh, *last)]


def _gateway_servers(gateways: tuple[GatewayListener, ...]) -> frozenset[str]:
    """The clusters of the servers Gateways name for their own listeners (gRPC too)."""
    out = set()
    parts = [s.http for g in gateways for s in g.matched if s.http is not None]
    for g in (*gateways, *parts):
        extauth, limits = g.plugins.extauth_server, g.plugins.ratelimit_server
        if extauth is not None and extauth.cluster is not None:
            out.add(extauth.cluster)
        if limits is not None and limits.cluster is not None:
            out.add(limits.cluster)
        out.update(p.server.cluster for p in g.plugins.ext_proc if p.server and p.server.cluster)
    return frozenset(out)


def build_proxies(
    whole: ir.Proxy,
    by_role: Mapping[str, Sequence[ir.VirtualHost]],
    gateways: tuple[GatewayListener, ...],
    *,
    ordered: bool = False,
) -> tuple[ir.Proxy, ...]:
    """`whole` holds every cluster, secret and AuthConfig, and is named as the default
    proxy; the result has the default proxy first, then the others by name. `ordered`: the
    virtual hosts of each role are already in served order (by name, stable)."""
    names = [whole.name]
    names += sorted({p for g in gateways for p in g.proxies} - {whole.name})
    listeners = {name: _listeners(name, by_role, gateways, ordered) for name in names}
    if len(names) == 1:
        return (dataclasses.replace(whole, listeners=listeners[whole.name]),)
    uses = {name: _uses(listeners[name], whole.clusters) for name in names}
    out = []
    for name in names:
        own_clusters, own_secrets = uses[name]
        other_clusters = {c for n, (cs, _) in uses.items() if n != name for c in cs}
        other_secrets = {s for n, (_, ss) in uses.items() if n != name for s in ss}
        foreign_clusters = other_clusters - own_clusters
        foreign_secrets = other_secrets - own_secrets
        out.append(
            dataclasses.replace(
                whole,
                name=name,
                listeners=listeners[name],
                clusters=tuple(c for c in whole.clusters if c.name not in foreign_clusters),
                secrets=tuple(s for s in whole.secrets if s.name not in foreign_secrets),
            )
        )
    return tuple(out)


def _listeners(
    proxy: str,
    by_role: Mapping[str, Sequence[ir.VirtualHost]],
    gateways: tuple[GatewayListener, ...],
    ordered: bool,
) -> tuple[ir.Listener, ...]:
    out = []
    for g in gateways:
        vhosts = by_role.get(g.role, [])
        if proxy in g.proxies and g.kind != "http":
            listener = _layer4_listener(g, by_role)
            if listener is not None:
                out.append(listener)
        elif proxy in g.proxies and (vhosts or g.keep_empty):
            out.append(
                ir.Listener(
                    name=g.name,
                    address=g.address,
                    port=g.port,
                    virtual_hosts=tuple(vhosts if ordered else sorted(vhosts, key=_name)),
                    gateway=g.source,
                    http=g.http,
                    options=g.options,
                    plugins=g.plugins,
                    route_options=g.route_options,
                )
            )
    return tuple(out)


def _name(vhost: ir.VirtualHost) -> str:
    return vhost.name


def _layer4_listener(
    g: GatewayListener, by_role: Mapping[str, Sequence[ir.VirtualHost]]
) -> ir.Listener | None:
    """A TCP or hybrid gateway's listener; None when no part has a filter chain (a TLS
    HTTP part without TLS virtual hosts has none)."""
    matched = []
    for section in g.matched:
        http = None
        if section.http is not None:
            vhosts = sorted(by_role.get(section.http.role, []), key=lambda v: v.name)
            if not vhosts and section.matched.tls is not None:
                continue
            http = ir.Listener(
                name=section.name,
                address=g.address,
                port=g.port,
                virtual_hosts=tuple(vhosts),
                http=section.http.http,
                options=section.http.options,
                plugins=section.http.plugins,
            )
        matched.append(
            ir.MatchedListener(
                name=section.name,
                match=section.matched.match,
                http=http,
                tcp=section.tcp,
                source=section.source,
            )
        )
    if g.tcp is None and not matched:
        return None
    return ir.Listener(
        name=g.name,
        address=g.address,
        port=g.port,
        virtual_hosts=(),
        gateway=g.source,
        options=g.options,
        tcp=g.tcp,
        matched=tuple(matched),
    )


def _uses(
    listeners: tuple[ir.Listener, ...], clusters: tuple[ir.Cluster, ...]
) -> tuple[set[str], set[str]]:
    """The cluster and secret names the listeners use, with the secrets of those clusters."""
    cluster_names: set[str] = set()
    secret_names: set[str] = set()
    _walk(listeners, cluster_names, secret_names, set())
    used = [c for c in clusters if c.name in cluster_names]
    _walk(used, set(), secret_names, set())
    return cluster_names, secret_names


def _walk(value: Any, clusters: set[str], secrets: set[str], seen: set[int]) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if id(value) in seen:
            return
        seen.add(id(value))
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if isinstance(item, str):
                _note(f.name, item, clusters, secrets)
            elif item is not None:
                _walk(item, clusters, secrets, seen)
    elif isinstance(value, Mapping):
        _walk(list(value.values()), clusters, secrets, seen)
    elif isinstance(value, Iterable) and not isinstance(value, str | bytes):
        for item in value:
            _walk(item, clusters, secrets, seen)


def _note(field: str, value: str, clusters: set[str], secrets: set[str]) -> None:
    if field == "cluster" or field.endswith("_cluster"):
        clusters.add(value)
    elif field == "secret" or field.endswith("_secret"):
        secrets.add(value)
