"""Gateways → the listeners of each proxy, and which virtual hosts each listener serves.

Without any Gateway resource, the two built-in gateways of SPEC.md serve every
VirtualService on the default proxy: plain ones on `Options.http_port`, TLS ones on
`Options.https_port` (placement roles `http` and `https`, which is what
`virtualhosts.py` builds, so that case needs no placing). Once Gateway resources exist,
they are the whole list: each is a listener `listener-<bindAddress>-<bindPort>` on each of
its proxies, serving the VirtualServices it selects whose TLS-ness matches its `ssl`, and
carrying how it speaks HTTP (`hcm.py`: `httpConnectionManagerSettings` over gw's defaults,
which the built-in gateways get too), accepts connections (`listener_options.py`) and which
filters its own options add (`http_listener_options.py`).

A Gateway refers to VirtualServices to *select* them, not to depend on them: a rejected
VirtualService does not reject the Gateway (no reference edge is recorded), it is only left
off the listener (or served as last accepted). Bad Gateways are rejected and keep their last
accepted version, like every other kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gw import api
from gw.api import ResourceKey
from gw.api.delegation import SelectorExpression
from gw.api.gateway import DEFAULT_PROXY
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.access_log_sinks import collector_clusters
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.hcm import build_http_settings
from gw.translator.gateway.http_listener_options import (
    build_http_listener_options,
    with_http_options,
)
from gw.translator.gateway.listener_options import build_listener_options
from gw.translator.gateway.selectors import expression_problem, matches
from gw.translator.gateway.upstreams import is_ip
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

HTTP, HTTPS = "http", "https"
_PROXY_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which VirtualServices a gateway serves (REFERENCE.md §1.9): expressions, else
    labels, else refs, else all; `namespaces` (empty or `*`: all) narrows all but refs."""

    refs: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[SelectorExpression, ...] = ()
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
            return all(matches(e, meta.labels) for e in self.expressions)
        return all(meta.labels.get(k) == v for k, v in self.labels)


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
    #: How it speaks HTTP and accepts connections (gw's defaults for the built-in ones).
    http: ir.HttpSettings = ir.HttpSettings()
    options: ir.ListenerOptions = ir.ListenerOptions()
    plugins: ir.HttpListenerOptions = ir.HttpListenerOptions()

    @property
    def name(self) -> str:
        return f"listener-{self.address}-{self.port}"


def default_gateways(options: Options, *, grpc_web: bool = True) -> tuple[GatewayListener, ...]:
    """The built-in gateways: HTTP (always listening) and HTTPS (once a TLS host exists),
    with gRPC-Web as Settings say (`grpc_web`)."""
    proxies = (options.proxy_name,)
    address = options.bind_address
    plugins = ir.HttpListenerOptions(grpc_web=grpc_web)
    return (
        GatewayListener(
            role=HTTP, source=None, address=address, port=options.http_port, ssl=False,
            proxies=proxies, keep_empty=True, plugins=plugins,
        ),
        GatewayListener(
            role=HTTPS, source=None, address=address, port=options.https_port, ssl=True,
            proxies=proxies, plugins=plugins,
        ),
    )  # fmt: skip


def kebab(name: str) -> str:
    """`gatewayProxy` → `gateway-proxy` (the established conversion of `proxyNames`)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


def build_gateways(
    snapshot: Snapshot,
    refs: Refs,
    reports: Reports,
    *,
    keep_empty: bool = False,
    grpc_web: bool = True,
) -> dict[ResourceKey, Contribution]:
    """Each valid Gateway's listener (bad ones are reported and left out); `grpc_web` for
    those that do not say. Port clashes between gateways are found when they are chosen
    (`placement.choose_gateways`)."""
    out: dict[ResourceKey, Contribution] = {}
    for gateway in snapshot.of_kind(api.Gateway):
        listener = _build(gateway, refs, reports.of(gateway.key), keep_empty, grpc_web)
        if listener is not None:
            assert listener.source is not None
            clusters = collector_clusters(listener.options, listener.source)
            out[gateway.key] = Contribution(gateways=(listener,), clusters=clusters)
    return out


def _build(
    gateway: api.Gateway, refs: Refs, report: ResourceReport, keep_empty: bool, grpc_web: bool
) -> GatewayListener | None:
    spec, meta = gateway.spec, gateway.metadata
    errors = len(report.errors)
    if not is_ip(spec.bind_address):
        report.error(
            "spec.bindAddress",
            f"bindAddress {spec.bind_address} is not a valid IP address (use `::` for all)",
        )
    for field in ("tcpGateway", "hybridGateway", "routeOptions"):
        value = getattr(spec, _snake(field))
        if value or (value is not None and field.endswith("Gateway")):
            report.error(
                f"spec.{field}",
                f"{field} is not supported: gw builds HTTP gateways only; remove {field} "
                "(see docs/gateways.md)",
            )
    proxies = _proxy_names(spec.proxy_names, report)
    http = spec.http_gateway
    if http is None:
        if spec.tcp_gateway is None and spec.hybrid_gateway is None:
            report.error("spec", "invalid gateway: gateway must contain gatewayType")
        return None
    settings = build_http_settings(
        http.options.http_connection_manager_settings if http.options else None,
        refs,
        gateway.key,
        report,
    )
    if settings is not None:
        settings = with_http_options(settings, http.options, report)
    plugins = build_http_listener_options(
        http.options, refs, gateway.key, report, grpc_web=grpc_web
    )
    listener_options = build_listener_options(spec, refs, gateway.key, report)
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
        http=settings or ir.HttpSettings(),
        options=listener_options or ir.ListenerOptions(),
        plugins=plugins,
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
    for i, expression in enumerate(expressions):
        problem = expression_problem(expression)
        if problem is not None:  # the gateway cannot select: rejected (fail closed)
            report.error(f"{field}.virtualServiceExpressions.expressions[{i}]", problem)
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
