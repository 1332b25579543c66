"""The Gateways that are not plain HTTP listeners: a `tcpGateway` (`tcp.py`) or a
`hybridGateway` (`hybrid.py`, `matchable.py`), and what building every Gateway of a
snapshot shares (`GatewayBuild`).

An HTTP part of a hybrid gateway, and the `options` of an HttpListenerOption, are built
exactly as a Gateway's `httpGateway` is (`gateways.py`, handed in as `BuildGateway`): as a
Gateway of their own holding only that `httpGateway`, built apart, whose findings are moved
to where the part is written and whose references are made by the resource holding it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gw import api
from gw.api import ResourceKey
from gw.api.gateway import GatewaySpec
from gw.api.http_gateway import HttpGateway
from gw.api.http_listener_options import HttpListenerOptions
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway import http_listener_option
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.hybrid import HybridContext, MatchedSection, build_hybrid, build_section
from gw.translator.gateway.listener_options import build_listener_options
from gw.translator.gateway.matchable import merge_fields, relocate, unselected_parts
from gw.translator.gateway.tcp import TcpContext, build_tcp_listener
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

if TYPE_CHECKING:
    from gw.translator.gateway.gateways import GatewayListener


@dataclass(slots=True, kw_only=True)
class GatewayBuild:
    """What building the Gateways of one snapshot reads, and what it shares across them."""

    snapshot: Snapshot
    refs: Refs
    reports: Reports
    keep_empty: bool = False
    #: gRPC-Web for the HTTP gateways that do not say (Settings).
    grpc_web: bool = True
    now: float | None = None
    #: The HttpListenerOption chosen for each Gateway (`http_listener_option.py`).
    attached: dict[ResourceKey, HttpListenerOptions] = field(default_factory=dict)
    #: The Matchable*Gateways some Gateway selected.
    selected: set[ResourceKey] = field(default_factory=set)


#: Builds one Gateway (`gateways.py`); None after reporting why not.
BuildGateway = Callable[[api.Gateway, GatewayBuild], Contribution | None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Layer4:
    """A TCP or hybrid Gateway's listener as built, before it is placed."""

    options: ir.ListenerOptions
    tcp: ir.TcpListener | None = None
    matched: tuple[MatchedSection, ...] = ()
    secrets: tuple[ir.TlsSecret, ...] = ()
    clusters: tuple[ir.Cluster, ...] = ()


def build_layer4(gateway: api.Gateway, context: GatewayBuild, build: BuildGateway) -> Layer4 | None:
    """The listener of a `tcpGateway` or `hybridGateway` (without parts when its delegations
    select none: it then has no listener), or None after reporting errors."""
    spec, meta = gateway.spec, gateway.metadata
    report = context.reports.of(gateway.key)
    errors = len(report.errors)
    if spec.ssl:
        which = "tcpHosts" if spec.tcp_gateway is not None else "matchers"
        report.warning("spec.ssl", f"ignored: the sslConfig of its {which} says what is TLS")
    listener_options = build_listener_options(spec, context.refs, gateway.key, report)
    tcp = TcpContext(
        owner=gateway.key,
        field="spec.tcpGateway",
        snapshot=context.snapshot,
        refs=context.refs,
        report=report,
        now=context.now,
    )
    tcp_listener, matched = None, None
    if spec.tcp_gateway is not None:
        tcp_listener = build_tcp_listener(spec.tcp_gateway, tcp)
    else:
        name = f"listener-{spec.bind_address}-{spec.bind_port}"
        hybrid = _hybrid_context(
            gateway, tcp, name, f"{meta.namespace}.{meta.name}", context, build
        )
        matched = build_hybrid(gateway, hybrid)
    if len(report.errors) > errors or (tcp_listener is None and matched is None):
        return None
    return Layer4(
        options=listener_options or ir.ListenerOptions(),
        tcp=tcp_listener,
        matched=matched or (),
        secrets=tuple(tcp.secrets),
        clusters=tuple(tcp.clusters.values()),
    )


def _hybrid_context(
    gateway: api.Gateway,
    tcp: TcpContext,
    name: str,
    role: str,
    context: GatewayBuild,
    build: BuildGateway,
) -> HybridContext:
    """Each HTTP part is built with the HttpListenerOption attached to the Gateway."""
    attached = context.attached.get(gateway.key)

    def http_part(
        http: HttpGateway, ssl: bool, field: str, owner: ResourceKey, report: ResourceReport,
        part_role: str,
    ) -> GatewayListener | None:  # fmt: skip
        if attached is not None:
            http = http.model_copy(update={"options": merge_fields(http.options, attached)})
        spec = GatewaySpec(bind_port=gateway.spec.bind_port, ssl=ssl, http_gateway=http)
        part = gateway.model_copy(update={"spec": spec})
        built = _scoped(part, owner, field, report, context, build)
        if built is None:
            return None
        return dataclasses.replace(built.gateways[0], role=part_role, source=None)

    return HybridContext(
        tcp=tcp,
        reports=context.reports,
        listener_name=name,
        role=role,
        http_part=http_part,
        selected=context.selected,
    )


def _scoped(
    gateway: api.Gateway,
    owner: ResourceKey,
    field: str,
    report: ResourceReport,
    context: GatewayBuild,
    build: BuildGateway,
) -> Contribution | None:
    """`gateway` (an `httpGateway` alone) built apart: its findings under `field` of
    `report`, its references made by `owner`."""
    scratch = Reports()
    refs = context.refs.scope()
    built = build(gateway, dataclasses.replace(context, refs=refs, reports=scratch, attached={}))
    relocate(scratch.of(gateway.key), report, "spec.httpGateway", field)
    for edge in refs.edges:
        context.refs.link(owner, field + edge.field.removeprefix("spec.httpGateway"), edge.referent)
    return built


def options_check(context: GatewayBuild, build: BuildGateway) -> http_listener_option.Check:
    """How an HttpListenerOption's `options` are checked: as the `httpGateway.options` of
    a Gateway of its own, the findings under `spec.options`."""

    def check(option: api.HttpListenerOption, report: ResourceReport) -> None:
        spec = GatewaySpec(http_gateway=HttpGateway(options=option.spec.options))
        gateway = api.Gateway(
            api_version=api.Gateway.API_VERSION,
            kind=api.Gateway.KIND,
            metadata=option.metadata,
            spec=spec,
        )
        _scoped(gateway, option.key, "spec", report, context, build)

    return check


def check_unselected(context: GatewayBuild, build: BuildGateway) -> None:
    """The Matchable*Gateways no Gateway selected, built on their own for their statuses."""
    tcp = TcpContext(
        owner=ResourceKey("", "", ""),
        field="spec.tcpGateway",
        snapshot=context.snapshot,
        refs=context.refs,
        report=ResourceReport(),
        now=context.now,
    )
    gateway = api.Gateway(
        api_version=api.Gateway.API_VERSION,
        kind=api.Gateway.KIND,
        metadata=api.Metadata(name="unselected"),
    )
    hybrid = _hybrid_context(gateway, tcp, "unselected", "unselected", context, build)
    for part in unselected_parts(context.refs, context.reports, context.selected):
        build_section(part, hybrid)
