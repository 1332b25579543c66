"""Gateways → the listeners served, and each virtual host on the listeners that select it.

`choose_gateways` picks each Gateway as built or, when it is rejected, as last accepted, and
refuses port clashes per proxy; `place_virtual_hosts` puts each VirtualService's virtual host
on every listener whose gateway selects it — or, on a hybrid gateway, on every HTTP part
that selects it, with the TLS defaults of the part's matcher (per-listener domain and SNI
conflicts are then checked by `virtualhosts.py`, `tls.py` and `hybrid.py`, which key their
claims by that placement).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping

from gw import api
from gw.api import ResourceKey
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.gateways import HTTPS, GatewayListener, default_gateways
from gw.translator.gateway.hybrid_matcher import TlsDefaults
from gw.translator.options import Options
from gw.translator.reports import Reports

PROXY_KIND = "Proxy"


def choose_gateways(
    snapshot: Snapshot,
    broken: Iterable[ResourceKey],
    built: Mapping[ResourceKey, Contribution],
    previous: Mapping[ResourceKey, Contribution],
    reports: Reports,
    options: Options,
    *,
    grpc_web: bool = True,
) -> tuple[GatewayListener, ...]:
    """The listeners served: each Gateway as built, or as last accepted when rejected; the
    built-in ones (with gRPC-Web as `grpc_web` says) when there is no Gateway at all. A
    fresh gateway whose port a rejected one's last accepted version still holds is rejected
    in turn (that one keeps it)."""
    keys = {g.key for g in snapshot.of_kind(api.Gateway)}
    keys |= {k for k in broken if k.kind == api.Gateway.KIND}
    if not keys:
        return default_gateways(options, grpc_web=grpc_web)
    _check_ports(built, reports, {}, options.namespace)
    chosen: dict[ResourceKey, Contribution] = {}
    fallback: dict[ResourceKey, Contribution] = {}
    for key in sorted(keys):
        if key in built and not reports.rejected(key):
            chosen[key] = built[key]
        elif key in previous:
            fallback[key] = previous[key]
    while _check_ports(chosen, reports, fallback, options.namespace):
        for key in [k for k in chosen if reports.rejected(k)]:
            del chosen[key]
            if key in previous:
                fallback[key] = previous[key]
    return tuple(g for _, c in sorted({**chosen, **fallback}.items()) for g in c.gateways)


def _check_ports(
    fresh: Mapping[ResourceKey, Contribution],
    reports: Reports,
    fallback: Mapping[ResourceKey, Contribution],
    namespace: str,
) -> bool:
    """Reject fresh gateways that share a port of a proxy with another gateway (a fallback
    one keeps it). Findings go to the gateways and to the proxy. True when any was found."""
    users: dict[tuple[str, int], list[tuple[ResourceKey, GatewayListener]]] = defaultdict(list)
    for key, contribution in sorted({**fresh, **fallback}.items()):
        for g in contribution.gateways:
            for proxy in g.proxies:
                users[(proxy, g.port)].append((key, g))
    found = False
    for (proxy, port), sharing in sorted(users.items()):
        if len(sharing) < 2:
            continue
        listeners = " ".join(g.name for _, g in sharing)
        gateways = ", ".join(f"{k.namespace}.{k.name}" for k, _ in sharing)
        message = (
            f"Listener Error: BindPortNotUniqueError. Reason: port {port} is shared by "
            f"listeners [{listeners}] of gateways [{gateways}] on proxy {proxy}"
        )
        held = [k for k, _ in sharing if k in fallback]
        for key, _ in sharing:
            if key in fallback:
                continue
            found = True
            hint = (
                f"; gateway {held[0].namespace}.{held[0].name} is rejected and its last "
                "accepted version keeps the port"
                if held
                else "; give each gateway of a proxy its own bindPort"
            )
            reports.of(key).error("spec.bindPort", message + hint)
        reports.of(ResourceKey(PROXY_KIND, namespace, proxy)).error("spec.listeners", message)
    return found


def place_virtual_hosts(
    hosts: Mapping[ResourceKey, Contribution],
    gateways: tuple[GatewayListener, ...],
    snapshot: Snapshot,
    options: Options,
) -> dict[ResourceKey, Contribution]:
    """Each VirtualService's virtual host on every listener that selects it. The built-in
    gateways select everything by TLS-ness, which is how `virtualhosts.py` already placed
    them (roles `http`/`https`): then nothing changes."""
    if all(g.source is None for g in gateways):  # the built-in ones
        return dict(hosts)
    out: dict[ResourceKey, Contribution] = {}
    # With whether each part selects every VirtualService (told once, not per host).
    parts = [(p, d, not p.selection.narrowed) for g in gateways for p, d in http_parts(g)]
    for key, contribution in hosts.items():
        vs = snapshot.resources.get(key)
        placed: list[tuple[str, ir.VirtualHost]] = []
        for role, vhost in contribution.virtual_hosts:
            built_port = options.https_port if role == HTTPS else options.http_port
            for part, defaults, everything in parts:
                if part.ssl == (role == HTTPS) and isinstance(vs, api.VirtualService):
                    if everything or part.selection.picks(vs):
                        placed_vhost = _ported(vhost, built_port, part.port)
                        if defaults is not None and placed_vhost.tls is not None:
                            tls = defaults.apply(placed_vhost.tls, vs.spec.ssl_config)
                            placed_vhost = dataclasses.replace(placed_vhost, tls=tls)
                        placed.append((part.role, placed_vhost))
        out[key] = contribution.placed(tuple(placed))
    return out


def servable(gateways: Iterable[GatewayListener]) -> Callable[[str, ir.VirtualHost], bool]:
    """Whether a virtual host placed on a listener role can be served there now. A last
    accepted one (its VirtualService rejected or unreadable since) keeps the placement it
    had, and the Gateway may have turned `ssl` on or off since: a listener is TLS or plain,
    never both, so such a host is served nowhere until its VirtualService is accepted
    again. (Fresh hosts are placed by TLS-ness: `place_virtual_hosts`.)"""
    ssl = {part.role: part.ssl for g in gateways for part, _ in http_parts(g)}
    return lambda role, vhost: ssl.get(role, vhost.tls is not None) == (vhost.tls is not None)


def http_parts(g: GatewayListener) -> tuple[tuple[GatewayListener, TlsDefaults | None], ...]:
    """Where a gateway places virtual hosts: itself, or each HTTP part of a hybrid one
    (with its matcher's TLS defaults); a TCP gateway nowhere."""
    if g.kind == "hybrid":
        return tuple((s.http, s.matched.tls) for s in g.matched if s.http is not None)
    return () if g.kind == "tcp" else ((g, None),)


def _ported(vhost: ir.VirtualHost, built: int, port: int) -> ir.VirtualHost:
    """The host for a listener on `port`: `*.a.test` matches a `Host` with a port only as
    `*.a.test:<listener port>` (see `virtualhosts.with_ports`)."""
    if built == port:
        return vhost
    suffix = f":{built}"
    domains = tuple(
        d[: -len(suffix)] + f":{port}"
        if d.startswith("*") and d.endswith(suffix) and d[: -len(suffix)] in vhost.domains
        else d
        for d in vhost.domains
    )
    return vhost if domains == vhost.domains else dataclasses.replace(vhost, domains=domains)


def warn_empty_gateways(
    gateways: tuple[GatewayListener, ...],
    by_role: Mapping[str, list[ir.VirtualHost]],
    reports: Reports,
) -> None:
    """A Gateway whose selection picks no virtual host has no listener: say so on it. One
    that selects everything (the established `httpGateway: {}`, an `ssl` gateway before the
    first TLS VirtualService exists) is simply waiting, and says nothing."""
    for g in gateways:
        if not g.selection.narrowed or g.source is None or g.keep_empty:
            continue
        if not by_role.get(g.role):
            key = ResourceKey(g.source.kind, g.source.namespace, g.source.name)
            reports.of(key).warning(
                "spec.httpGateway",
                "no VirtualService is served by this gateway, so it has no listener: check "
                "its selection and the `ssl` of the VirtualServices (settings "
                "gateway.translateEmptyGateways: true listens anyway)",
            )


def warn_domain_conflicts(
    conflicts: Iterable[tuple[str, str]],
    gateways: tuple[GatewayListener, ...],
    reports: Reports,
) -> None:
    """The Gateway also names the domains its VirtualServices fight over (they are
    rejected; the gateway itself only warns, so that its listener keeps serving the rest)."""
    by_role: dict[str, list[str]] = defaultdict(list)
    for role, domain in conflicts:
        by_role[role].append(domain)
    for g in gateways:
        domains = [d for part, _ in http_parts(g) for d in by_role.get(part.role, [])]
        if g.source is not None and domains:
            key = ResourceKey(g.source.kind, g.source.namespace, g.source.name)
            reports.of(key).warning(
                "spec.hybridGateway" if g.kind == "hybrid" else "spec.httpGateway",
                "domain conflict: the following domains are present in more than one of the "
                f"virtual services associated with this gateway: [{' '.join(domains)}]",
            )
