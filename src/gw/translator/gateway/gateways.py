"""Gateways → the listeners of each proxy, and what each listener serves.

Without any Gateway resource, the two built-in gateways of SPEC.md serve every
VirtualService on the default proxy: plain ones on `Options.http_port`, TLS ones on
`Options.https_port` (placement roles `http` and `https`, which is what
`virtualhosts.py` builds, so that case needs no placing). Once Gateway resources exist,
they are the whole list: each is a listener `listener-<bindAddress>-<bindPort>` on each of
its proxies, serving the VirtualServices it selects whose TLS-ness matches its `ssl`, and
carrying how it speaks HTTP (`hcm.py`: `httpConnectionManagerSettings` over gw's defaults,
which the built-in gateways get too), accepts connections (`listener_options.py`), which
filters its own options add (`http_listener_options.py`) and how it serves its route
configuration (`routeconfig.py`: `routeOptions`); TCP and hybrid gateways are `layer4.py`'s,
HttpListenerOptions `http_listener_option.py`'s.

A Gateway refers to VirtualServices to *select* them (no reference edge): a rejected one is
only left off the listener (or served as last accepted), and never rejects the Gateway.
Bad Gateways are rejected and keep their last accepted version, like every other kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gw import api
from gw.api import ResourceKey
from gw.api.delegation import SelectorExpression
from gw.api.gateway import DEFAULT_PROXY
from gw.api.http_gateway import HttpGateway
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway import http_listener_option
from gw.translator.gateway.access_log_sinks import collector_clusters
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.hcm import build_http_settings
from gw.translator.gateway.http_listener_options import (
    build_http_listener_options,
    with_http_options,
)
from gw.translator.gateway.hybrid import MatchedSection
from gw.translator.gateway.layer4 import (
    GatewayBuild,
    Layer4,
    build_layer4,
    check_unselected,
    options_check,
)
from gw.translator.gateway.listener_options import build_listener_options
from gw.translator.gateway.matchable import merge_fields
from gw.translator.gateway.routeconfig import build_route_config_options
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
    #: What it serves: virtual hosts, TCP hosts (`tcp`) or a hybrid's parts (`matched`).
    kind: Literal["http", "tcp", "hybrid"] = "http"
    tcp: ir.TcpListener | None = None
    matched: tuple[MatchedSection, ...] = ()
    #: The Gateway's `routeOptions` (None: Envoy's defaults).
    route_options: ir.RouteConfigOptions | None = None

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
    now: float | None = None,
) -> dict[ResourceKey, Contribution]:
    """Each valid Gateway's listener (bad ones are reported and left out); `grpc_web` for
    those that do not say. Port clashes between gateways are found when they are chosen
    (`placement.choose_gateways`)."""
    context = GatewayBuild(
        snapshot=snapshot,
        refs=refs,
        reports=reports,
        keep_empty=keep_empty,
        grpc_web=grpc_web,
        now=now,
    )
    context.attached = http_listener_option.attach(refs, reports, options_check(context, _build))
    out: dict[ResourceKey, Contribution] = {}
    for gateway in snapshot.of_kind(api.Gateway):
        built = _build(gateway, context)
        if built is not None:
            out[gateway.key] = built
    check_unselected(context, _build)
    return out


def _build(gateway: api.Gateway, context: GatewayBuild) -> Contribution | None:
    spec, meta = gateway.spec, gateway.metadata
    refs, report, keep_empty = context.refs, context.reports.of(gateway.key), context.keep_empty
    errors = len(report.errors)
    if not is_ip(spec.bind_address):
        report.error(
            "spec.bindAddress",
            f"bindAddress {spec.bind_address} is not a valid IP address (use `::` for all)",
        )
    proxies = _proxy_names(spec.proxy_names, report)
    if sum(t is not None for t in (spec.http_gateway, spec.tcp_gateway, spec.hybrid_gateway)) > 1:
        report.error("spec", "a gateway has one of httpGateway, tcpGateway or hybridGateway")
        return None
    http = spec.http_gateway
    if http is None and (spec.tcp_gateway is not None or spec.hybrid_gateway is not None):
        built = build_layer4(gateway, context, _build) if len(report.errors) == errors else None
        return _layer4(gateway, proxies, built)
    if http is None:
        report.error("spec", "invalid gateway: gateway must contain gatewayType")
        return None
    if (attached := context.attached.get(gateway.key)) is not None:
        http = http.model_copy(update={"options": merge_fields(http.options, attached)})
        spec = spec.model_copy(update={"http_gateway": http})
    settings = build_http_settings(
        http.options.http_connection_manager_settings if http.options else None,
        refs,
        gateway.key,
        report,
    )
    if settings is not None:
        settings = with_http_options(settings, http.options, report)
    plugins = build_http_listener_options(
        http.options, refs, gateway.key, report, grpc_web=context.grpc_web
    )
    listener_options = build_listener_options(spec, refs, gateway.key, report)
    selection = _selection(http, gateway.key, refs, report)
    if len(report.errors) > errors:
        return None
    source = ir.SourceRef(kind=api.Gateway.KIND, namespace=meta.namespace, name=meta.name)
    listener = GatewayListener(
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
        route_options=build_route_config_options(spec.route_options),
    )
    return Contribution(gateways=(listener,), clusters=collector_clusters(listener.options, source))


def _layer4(
    gateway: api.Gateway, proxies: tuple[str, ...], built: Layer4 | None
) -> Contribution | None:
    """A `tcpGateway`'s or a `hybridGateway`'s listener, with its secrets and clusters."""
    if built is None:
        return None
    spec, meta = gateway.spec, gateway.metadata
    listener = GatewayListener(
        role=f"{meta.namespace}.{meta.name}",
        source=ir.SourceRef(kind=api.Gateway.KIND, namespace=meta.namespace, name=meta.name),
        address=spec.bind_address,
        port=spec.bind_port,
        ssl=False,
        proxies=proxies,
        options=built.options,
        kind="tcp" if built.tcp is not None else "hybrid",
        tcp=built.tcp,
        matched=built.matched,
    )
    assert listener.source is not None
    clusters = (*built.clusters, *collector_clusters(built.options, listener.source))
    return Contribution(gateways=(listener,), secrets=built.secrets, clusters=clusters)


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


def _selection(
    http: HttpGateway, owner: ResourceKey, refs: Refs, report: ResourceReport
) -> Selection:
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
        key = Refs.key(api.VirtualService, ref, owner)
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
