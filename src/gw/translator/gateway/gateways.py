"""Gateways → the listeners of each proxy, and which virtual hosts each listener serves.

Without any Gateway resource, the two built-in gateways of SPEC.md serve every
VirtualService on the default proxy: plain ones on `Options.http_port`, TLS ones on
`Options.https_port` (placement roles `http` and `https`, which is what
`virtualhosts.py` builds, so that case needs no placing). Once Gateway resources exist,
they are the whole list: each is a listener `listener-<bindAddress>-<bindPort>` on each of
its proxies, serving the VirtualServices it selects whose TLS-ness matches its `ssl`.

A Gateway refers to VirtualServices to *select* them, not to depend on them: a rejected
VirtualService does not reject the Gateway (no reference edge is recorded), it is only left
off the listener (or served as last accepted). Bad Gateways are rejected and keep their last
accepted version, like every other kind.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gw import api
from gw.api import ResourceKey
from gw.api.gateway import DEFAULT_PROXY, LabelExpression
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.selectors import (
    check_expressions,
    matches_expressions,
    matches_labels,
)
from gw.translator.gateway.upstreams import is_ip
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

HTTP, HTTPS = "http", "https"
PROXY_KIND = "Proxy"
_PROXY_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which VirtualServices a gateway serves (REFERENCE.md §1.9): expressions, else
    labels, else refs, else all; `namespaces` (empty or `*`: all) narrows all but refs."""

    refs: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[LabelExpression, ...] = ()
    namespaces: tuple[str, ...] = ()

    @property
    def narrowed(self) -> bool:
        """False when it picks every VirtualService."""
        everywhere = not self.namespaces or "*" in self.namespaces
        return bool(self.refs or self.labels or self.expressions or not everywhere)

    def picks(self, vs: api.VirtualService) -> bool:
        meta = vs.metadata
        if self.refs and not (self.expressions or self.labels):
            return (meta.namespace, meta.name) in self.refs
        if self.namespaces and "*" not in self.namespaces:
            if meta.namespace not in self.namespaces:
                return False
        if self.expressions:
            return matches_expressions(self.expressions, meta.labels)
        return matches_labels(dict(self.labels), meta.labels)


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewayListener:
    """One gateway as the translator places virtual hosts on it."""

    #: Placement key of its virtual hosts: `http`/`https` (built-in), else `<ns>.<name>`.
    role: str
    #: The Gateway resource; None for the built-in gateways.
    source: ir.SourceRef | None
    address: str
    port: int
    ssl: bool
    proxies: tuple[str, ...]
    selection: Selection = Selection()
    #: Emit the listener even when no virtual host lands on it.
    keep_empty: bool = False

    @property
    def name(self) -> str:
        return f"listener-{self.address}-{self.port}"


def default_gateways(options: Options) -> tuple[GatewayListener, ...]:
    """The built-in gateways: HTTP (always listening) and HTTPS (once a TLS host exists)."""
    proxies = (options.proxy_name,)
    address = options.bind_address
    return (
        GatewayListener(
            role=HTTP, source=None, address=address, port=options.http_port, ssl=False,
            proxies=proxies, keep_empty=True,
        ),
        GatewayListener(
            role=HTTPS, source=None, address=address, port=options.https_port, ssl=True,
            proxies=proxies,
        ),
    )  # fmt: skip


def kebab(name: str) -> str:
    """`gatewayProxy` → `gateway-proxy` (the established conversion of `proxyNames`)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


def build_gateways(
    snapshot: Snapshot, refs: Refs, reports: Reports, namespace: str, *, keep_empty: bool = False
) -> dict[ResourceKey, Contribution]:
    """Each valid Gateway's listener (bad ones are reported and left out)."""
    out: dict[ResourceKey, Contribution] = {}
    for gateway in snapshot.of_kind(api.Gateway):
        listener = _build(gateway, refs, reports.of(gateway.key), keep_empty)
        if listener is not None:
            out[gateway.key] = Contribution(gateways=(listener,))
    _check_ports(out, reports, {}, namespace)
    return {k: c for k, c in out.items() if not reports.rejected(k)}


def _build(
    gateway: api.Gateway, refs: Refs, report: ResourceReport, keep_empty: bool
) -> GatewayListener | None:
    spec, meta = gateway.spec, gateway.metadata
    errors = len(report.errors)
    if not is_ip(spec.bind_address):
        report.error(
            "spec.bindAddress",
            f"bindAddress {spec.bind_address} is not a valid IP address (use `::` for all)",
        )
    for field in ("tcpGateway", "hybridGateway", "options", "routeOptions"):
        value = getattr(spec, _snake(field))
        if value or (value is not None and field.endswith("Gateway")):
            report.error(
                f"spec.{field}",
                f"{field} is not supported: gw builds HTTP gateways only; remove {field} "
                "(see docs/gateways.md)",
            )
    if spec.use_proxy_proto:
        report.error(
            "spec.useProxyProto",
            "useProxyProto is not supported (deprecated upstream): gw does not read the "
            "PROXY protocol; remove it or set it to false",
        )
    proxies = _proxy_names(spec.proxy_names, report)
    http = spec.http_gateway
    if http is None:
        if spec.tcp_gateway is None and spec.hybrid_gateway is None:
            report.error("spec", "invalid gateway: gateway must contain gatewayType")
        return None
    if http.options:  # `options: {}` (as installs write it) asks for nothing
        report.error(
            "spec.httpGateway.options",
            "httpGateway.options is not supported: remove it (see docs/gateways.md)",
        )
    selection = _selection(gateway, refs, report)
    if len(report.errors) > errors:
        return None
    source = ir.SourceRef(kind=api.Gateway.KIND, namespace=meta.namespace, name=meta.name)
    return GatewayListener(
        role=f"{meta.namespace}.{meta.name}",
        source=source,
        address=spec.bind_address,
        port=spec.bind_port,
        ssl=spec.ssl,
        proxies=proxies,
        selection=selection,
        keep_empty=keep_empty,
    )


def _snake(field: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", field).lower()


def _proxy_names(names: list[str], report: ResourceReport) -> tuple[str, ...]:
    out: list[str] = []
    for i, name in enumerate(names or [DEFAULT_PROXY]):
        converted = kebab(name)
        if not _PROXY_NAME.match(converted):
            report.error(
                f"spec.proxyNames[{i}]",
                f"{name!r} is not a valid proxy name (lowercase letters, digits and '-')",
            )
        elif converted not in out:
            out.append(converted)
    return tuple(out)


def _selection(gateway: api.Gateway, refs: Refs, report: ResourceReport) -> Selection:
    http = gateway.spec.http_gateway
    assert http is not None
    field = "spec.httpGateway"
    expressions = (
        tuple(http.virtual_service_expressions.expressions)
        if (http.virtual_service_expressions)
        else ()
    )
    check_expressions(expressions, f"{field}.virtualServiceExpressions.expressions", report)
    used = (
        "virtualServiceExpressions"
        if expressions
        else ("virtualServiceSelector" if http.virtual_service_selector else None)
    )
    if used and http.virtual_service_selector and expressions:
        report.warning(
            f"{field}.virtualServiceSelector",
            "ignored: virtualServiceExpressions takes priority; keep one of the two",
        )
    if used and http.virtual_services:
        report.warning(
            f"{field}.virtualServices", f"ignored: {used} takes priority; keep one of the two"
        )
    found: list[tuple[str, str]] = []
    for i, ref in enumerate(http.virtual_services):
        key = Refs.key(api.VirtualService, ref, gateway.key)
        found.append((key.namespace, key.name))
        if not used and not refs.exists(key):
            report.warning(
                f"{field}.virtualServices[{i}]",
                f"invalid virtual service ref {key.namespace}.{key.name}: there is no such "
                "VirtualService",
            )
    return Selection(
        refs=tuple(found),
        labels=tuple(sorted(http.virtual_service_selector.items())),
        expressions=expressions,
        namespaces=tuple(http.virtual_service_namespaces),
    )


def choose_gateways(
    snapshot: Snapshot,
    broken: Iterable[ResourceKey],
    built: Mapping[ResourceKey, Contribution],
    previous: Mapping[ResourceKey, Contribution],
    reports: Reports,
    options: Options,
) -> tuple[GatewayListener, ...]:
    """The listeners served: each Gateway as built, or as last accepted when rejected; the
    built-in ones when there is no Gateway at all. A fresh gateway whose port a rejected
    one's last accepted version still holds is rejected in turn (that one keeps it)."""
    keys = {g.key for g in snapshot.of_kind(api.Gateway)}
    keys |= {k for k in broken if k.kind == api.Gateway.KIND}
    if not keys:
        return default_gateways(options)
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
    if gateways == default_gateways(options):
        return dict(hosts)
    out: dict[ResourceKey, Contribution] = {}
    for key, contribution in hosts.items():
        vs = snapshot.resources.get(key)
        placed: list[tuple[str, ir.VirtualHost]] = []
        for role, vhost in contribution.virtual_hosts:
            built_port = options.https_port if role == HTTPS else options.http_port
            for g in gateways:
                if g.ssl == (role == HTTPS) and isinstance(vs, api.VirtualService):
                    if g.selection.picks(vs):
                        placed.append((g.role, _ported(vhost, built_port, g.port)))
        secrets = contribution.secrets if placed else ()
        out[key] = dataclasses.replace(contribution, virtual_hosts=tuple(placed), secrets=secrets)
    return out


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
        if g.source is not None and by_role.get(g.role):
            key = ResourceKey(g.source.kind, g.source.namespace, g.source.name)
            reports.of(key).warning(
                "spec.httpGateway",
                "domain conflict: the following domains are present in more than one of the "
                f"virtual services associated with this gateway: [{' '.join(by_role[g.role])}]",
            )
