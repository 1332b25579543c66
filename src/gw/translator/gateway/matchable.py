"""MatchableHttpGateway and MatchableTcpGateway → parts of the hybrid listeners of the
Gateways that select them (`hybridGateway.delegatedHttpGateways` / `delegatedTcpGateways`).

Selection is the established one: `ref` names one; `selector` picks by labels, label
expressions and namespaces (empty: every namespace); neither picks every one. A TLS
`delegatedHttpGateways` (with `sslConfig`) picks only MatchableHttpGateways whose matcher
has an `sslConfig`, a plain one only those without. The delegating Gateway's
`httpConnectionManagerSettings` and `sslConfig` are defaults under each selected gateway's
own fields, field by field; with `preventChildOverrides` they win instead.

Each selected resource is built with its own report (its status names its fields) and
the Gateway refers to it: a rejected one rejects the Gateway, which keeps its last
accepted listener. One no Gateway selects is still checked, for its status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from gw.api import ResourceKey, ResourceRef
from gw.api.http_gateway import HttpGateway
from gw.api.http_listener_options import HttpListenerOptions
from gw.api.hybrid import DelegatedHttpGateway, GatewaySelector, HybridGateway
from gw.api.matchable import MatchableHttpGateway, MatchableTcpGateway
from gw.api.meta import Model
from gw.api.tcp import TcpGateway
from gw.translator import ir
from gw.translator.gateway import hcm
from gw.translator.gateway.hybrid_matcher import Matched, build_matcher
from gw.translator.gateway.selectors import expression_problem, matches
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

FIELD = "spec.hybridGateway"
M = TypeVar("M", bound=Model)
Matchable = MatchableHttpGateway | MatchableTcpGateway


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One part of a hybrid listener before it is built: its matcher (None: reported
    invalid), its gateway, and where it is written."""

    matcher: Matched | None
    http: HttpGateway | None = None
    tcp: TcpGateway | None = None
    #: The manifest path of the part in `owner` (`spec` for a Matchable*Gateway).
    field: str
    #: How findings name it.
    label: str
    #: Its listener name suffix.
    suffix: str
    owner: ResourceKey
    report: ResourceReport
    source: ir.SourceRef | None = None


def delegated_parts(
    hybrid: HybridGateway, refs: Refs, reports: Reports, gateway: ResourceKey
) -> list[Part]:
    """The parts the Gateway `gateway` delegates to, by name."""
    report = reports.of(gateway)
    errors = len(report.errors)
    _check_selectors(hybrid, report)
    if len(report.errors) > errors:
        return []
    out: list[Part] = []
    http = hybrid.delegated_http_gateways
    if http is not None:
        field = f"{FIELD}.delegatedHttpGateways"
        _check_parent(http, refs, gateway, report, field)
        selected = _select(
            MatchableHttpGateway, http.ref, http.selector, refs, gateway, report, field
        )
        for found in selected:
            matcher = found.spec.matcher
            if (http.ssl_config is None) == (
                matcher is not None and matcher.ssl_config is not None
            ):
                continue  # TLS-ness differs: not selected (the established rule)
            out.append(_http_part(found, reports.of(found.key), http))
    tcp = hybrid.delegated_tcp_gateways
    if tcp is not None:
        field = f"{FIELD}.delegatedTcpGateways"
        selected_tcp = _select(
            MatchableTcpGateway, tcp.ref, tcp.selector, refs, gateway, report, field
        )
        out += [_tcp_part(found, reports.of(found.key)) for found in selected_tcp]
    return out


def unselected_parts(refs: Refs, reports: Reports, selected: set[ResourceKey]) -> list[Part]:
    """The Matchable*Gateways no Gateway selected, as parts on their own (for their
    statuses only)."""
    out = [
        _http_part(found, reports.of(found.key), None)
        for found in refs.of_kind(MatchableHttpGateway)
        if found.key not in selected
    ]
    out += [
        _tcp_part(found, reports.of(found.key))
        for found in refs.of_kind(MatchableTcpGateway)
        if found.key not in selected
    ]
    return out


def _http_part(
    found: MatchableHttpGateway, report: ResourceReport, parent: DelegatedHttpGateway | None
) -> Part:
    spec = found.spec
    matcher = spec.matcher
    ssl = matcher.ssl_config if matcher else None
    http = spec.http_gateway or HttpGateway()
    if parent is not None:
        wins = parent.prevent_child_overrides
        if ssl is not None:
            ssl = merge_fields(ssl, parent.ssl_config, parent_wins=wins)
        options = http.options or HttpListenerOptions()
        settings = merge_fields(
            options.http_connection_manager_settings,
            parent.http_connection_manager_settings,
            parent_wins=wins,
        )
        options = options.model_copy(update={"http_connection_manager_settings": settings})
        http = http.model_copy(update={"options": options})
    built = build_matcher(
        matcher.source_prefix_ranges if matcher else [],
        ssl,
        [],
        tcp=False,
        field="spec.matcher",
        report=report,
    )
    return _part(found, built, report, http=http)


def _tcp_part(found: MatchableTcpGateway, report: ResourceReport) -> Part:
    matcher = found.spec.matcher
    built = build_matcher(
        matcher.source_prefix_ranges if matcher else [],
        matcher.ssl_config if matcher else None,
        matcher.passthrough_cipher_suites if matcher else [],
        tcp=True,
        field="spec.matcher",
        report=report,
    )
    return _part(found, built, report, tcp=found.spec.tcp_gateway or TcpGateway())


def _part(
    found: Matchable,
    matcher: Matched | None,
    report: ResourceReport,
    *,
    http: HttpGateway | None = None,
    tcp: TcpGateway | None = None,
) -> Part:
    meta = found.metadata
    short = "hgw" if isinstance(found, MatchableHttpGateway) else "tgw"
    return Part(
        matcher=matcher,
        http=http,
        tcp=tcp,
        field="spec",
        label=f"{found.KIND} {meta.namespace}.{meta.name}",
        suffix=f"{short}.{meta.namespace}.{meta.name}",
        owner=found.key,
        report=report,
        source=ir.SourceRef(kind=found.KIND, namespace=meta.namespace, name=meta.name),
    )


def merge_fields(child: M | None, parent: M | None, *, parent_wins: bool = False) -> M | None:
    """`child` with `parent`'s top-level fields where it sets none (or over its own when
    `parent_wins`)."""
    if parent is None or child is None:
        return child if parent is None else parent
    own = child.model_dump(by_alias=True, exclude_unset=True)
    above = parent.model_dump(by_alias=True, exclude_unset=True)
    merged = {**own, **above} if parent_wins else {**above, **own}
    return type(child).model_validate(merged, by_alias=True)


def _check_parent(
    parent: DelegatedHttpGateway,
    refs: Refs,
    gateway: ResourceKey,
    report: ResourceReport,
    field: str,
) -> None:
    """The defaults the Gateway hands down are checked on the Gateway itself."""
    if parent.ssl_config is not None:
        build_matcher([], parent.ssl_config, [], tcp=False, field=field, report=report)
    if parent.http_connection_manager_settings is not None:
        scratch = ResourceReport()
        hcm.build_http_settings(parent.http_connection_manager_settings, refs, gateway, scratch)
        relocate(scratch, report, hcm.FIELD, f"{field}.httpConnectionManagerSettings")


def relocate(found: ResourceReport, report: ResourceReport, old: str, new: str) -> None:
    """Copy `found`'s findings to `report`, their paths under `old` moved under `new`."""
    for finding in found.errors:
        report.error(_moved(finding.field, old, new), finding.message)
    for finding in found.warnings:
        report.warning(_moved(finding.field, old, new), finding.message)


def _moved(field: str, old: str, new: str) -> str:
    if field == old or field.startswith((f"{old}.", f"{old}[")):
        return new + field[len(old) :]
    return field


S = TypeVar("S", MatchableHttpGateway, MatchableTcpGateway)


def _select(
    kind: type[S],
    ref: ResourceRef | None,
    selector: GatewaySelector | None,
    refs: Refs,
    gateway: ResourceKey,
    report: ResourceReport,
    field: str,
) -> list[S]:
    """The resources of `kind` a delegation picks, each linked as a reference of the
    Gateway (so that a rejected one rejects it)."""
    report_field = f"{field}.ref" if ref is not None else f"{field}.selector"
    if ref is not None:
        found = refs.resolve(kind, ref, referrer=gateway, field=report_field)
        key = refs.key(kind, ref, gateway)
        if found is None and not refs.exists(key):
            report.warning(
                report_field, f"{kind.KIND} {key.namespace}.{key.name} not found: it selects none"
            )
        return [found] if found is not None else []
    selector = selector or GatewaySelector()
    namespaces = selector.namespaces
    picked = [
        item
        for item in refs.of_kind(kind)
        if (not namespaces or "*" in namespaces or item.metadata.namespace in namespaces)
        and all(item.metadata.labels.get(k) == v for k, v in selector.labels.items())
        and all(matches(e, item.metadata.labels) for e in selector.expressions)
    ]
    for key in refs.broken_of_kind(kind):
        if not namespaces or "*" in namespaces or key.namespace in namespaces:
            refs.link(gateway, report_field, key)
    for item in picked:
        refs.link(gateway, report_field, item.key)
    return picked


def _check_selectors(hybrid: HybridGateway, report: ResourceReport) -> None:
    """Both `ref` and `selector`, or an expression that cannot be evaluated: the Gateway
    cannot tell which parts it has (rejected, fail closed)."""
    for name, delegated in (
        ("delegatedHttpGateways", hybrid.delegated_http_gateways),
        ("delegatedTcpGateways", hybrid.delegated_tcp_gateways),
    ):
        if delegated is None:
            continue
        field = f"{FIELD}.{name}"
        if delegated.ref is not None and delegated.selector is not None:
            report.error(field, "set one of ref or selector")
        selector = delegated.selector
        for i, expression in enumerate(selector.expressions if selector else []):
            problem = expression_problem(expression)
            if problem is not None:
                report.error(f"{field}.selector.expressions[{i}]", problem)
