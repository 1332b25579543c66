"""The traffic options of a route, a virtual host or a weighted destination → the IR
holders (`ir.RouteTraffic`, `ir.HostTraffic`, `ir.DestinationTraffic`), each option by its
feature's module. Options that change how a request is forwarded (rewrites, stream
timeouts, shadowing, upgrades) only act on routes with a `routeAction`: elsewhere they are
reported. `dlp`, `waf` and `extensions` are refused: stock Envoy has neither filter, and
no gw plugin reads opaque extensions."""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any

from gw import api
from gw.api import ResourceKey
from gw.api.virtualservice import RouteOptions, VirtualHostOptions, WeightedDestinationOptions
from gw.translator import ir
from gw.translator.gateway.buffer import build_buffer
from gw.translator.gateway.csrf import build_csrf
from gw.translator.gateway.extproc import build_ext_proc_routes
from gw.translator.gateway.faults import build_faults
from gw.translator.gateway.headers import HeaderSecrets, build_header_manipulation
from gw.translator.gateway.rewrite import build_rewrites
from gw.translator.gateway.routetracing import build_route_tracing
from gw.translator.gateway.shadowing import build_shadow
from gw.translator.gateway.stats import build_virtual_clusters
from gw.translator.gateway.timeouts import build_stream_timeouts
from gw.translator.gateway.upgrades import build_upgrades
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

_UNSUPPORTED = {
    "dlp": "dlp is not supported in gw: data loss prevention needs the established "
    "gateway's enterprise DLP filter, which stock Envoy does not have; remove it",
    "waf": "waf is not supported in gw: a web application firewall needs a ModSecurity "
    "filter, which stock Envoy does not have; remove it",
    "extensions": "extensions is not supported in gw: it carries opaque data for the "
    "established gateway's plugins, and gw runs none that read it; remove it",
}
#: Options that only act on forwarded requests: (model attribute, manifest field).
_FORWARDING = (
    ("regex_rewrite", "regexRewrite"),
    ("host_rewrite_path_regex", "hostRewritePathRegex"),
    ("host_rewrite_header", "hostRewriteHeader"),
    ("append_x_forwarded_host", "appendXForwardedHost"),
    ("idle_timeout", "idleTimeout"),
    ("max_stream_duration", "maxStreamDuration"),
    ("upgrades", "upgrades"),
)


#: What is compared with to tell that nothing is set (made once, not per call).
_NO_ROUTE_TRAFFIC = ir.RouteTraffic()
_NO_HOST_TRAFFIC = ir.HostTraffic()
_NO_DESTINATION_TRAFFIC = ir.DestinationTraffic()


def refuse_unsupported(options: Any, field: str, report: ResourceReport) -> None:
    for name, message in _UNSUPPORTED.items():
        if getattr(options, name, None) is not None:
            report.error(f"{field}.{name}", message)


def refuse_in_route_tables(refs: Refs, reports: Reports) -> None:
    """A RouteTable's refused options are reported on it even before a route delegates to
    it (the other options are checked where its routes are built). Drawn per table and
    kept while it is the same (`refs.drawn`): checking 5,000 RouteTables again was an
    eighth of an edit's translation at 100,000 VirtualServices."""
    for key, errors in sorted(refs.drawn(api.RouteTable, route_table_refusals)):
        report = reports.of(key)
        for finding in errors:
            report.error(finding.field, finding.message)


def route_table_refusals(table: api.RouteTable) -> frozenset[Hashable]:
    """The refused options of `table`'s routes, as one value naming the table (nothing
    when it has none)."""
    report = ResourceReport()
    for i, route in enumerate(table.spec.routes):
        if route.options is not None:
            refuse_unsupported(route.options, f"spec.routes[{i}].options", report)
        multi = route.route_action.multi if route.route_action else None
        for j, dest in enumerate(multi.destinations if multi else ()):
            if dest.options is not None:
                where = f"spec.routes[{i}].routeAction.multi.destinations[{j}].options"
                refuse_unsupported(dest.options, where, report)
    return frozenset({(table.key, tuple(report.errors))}) if report.errors else frozenset()


def build_route_traffic(
    options: RouteOptions,
    field: str,
    *,
    forwarded: bool,
    own: RouteOptions | None,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> ir.RouteTraffic | None:
    """The route's traffic options; None when it has none or any is wrong (reported).
    `own` (the route's options before inheritance) says what to report on a route that
    does not forward."""
    errors = len(report.errors)
    refuse_unsupported(options, field, report)
    rewrites = timeouts = shadow = None
    upgrades: tuple[ir.Upgrade, ...] | None = ()
    if forwarded:
        rewrites = build_rewrites(options, field, report)
        timeouts = build_stream_timeouts(options, field, report)
        shadow = build_shadow(
            options.shadowing, f"{field}.shadowing", refs=refs, owner=owner, report=report
        )
        upgrades = build_upgrades(options.upgrades, f"{field}.upgrades", report)
    else:
        _report_unforwarded(own, field, report)
    built = ir.RouteTraffic(
        rewrites=rewrites,
        timeouts=timeouts,
        shadow=shadow,
        upgrades=upgrades or (),
        faults=build_faults(options.faults, f"{field}.faults", report),
        csrf=build_csrf(options.csrf, f"{field}.csrf", report),
        buffer=build_buffer(options.buffer_per_route, f"{field}.bufferPerRoute", report),
        ext_proc=build_ext_proc_routes(options, field, refs=refs, owner=owner, report=report),
        tracing=build_route_tracing(options.tracing, f"{field}.tracing", report),
        metadata=_metadata(options.envoy_metadata),
    )
    if len(report.errors) > errors or built == _NO_ROUTE_TRAFFIC:
        return None
    return built


def _report_unforwarded(own: RouteOptions | None, field: str, report: ResourceReport) -> None:
    if own is None:
        return
    if own.shadowing is not None:
        report.error(
            f"{field}.shadowing", "cannot use shadowing plugin on non-Route_Route route actions"
        )
    for attr, name in _FORWARDING:
        if getattr(own, attr) is not None:
            report.warning(
                f"{field}.{name}",
                f"no effect: {name} is only available for Route Actions (this route "
                "redirects or answers directly)",
            )


def _metadata(metadata: dict[str, dict[str, Any]] | None) -> tuple[tuple[str, str], ...]:
    if not metadata:
        return ()
    return tuple((ns, json.dumps(value, sort_keys=True)) for ns, value in sorted(metadata.items()))


def build_host_traffic(
    options: VirtualHostOptions,
    field: str,
    *,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> ir.HostTraffic | None:
    errors = len(report.errors)
    refuse_unsupported(options, field, report)
    built = ir.HostTraffic(
        csrf=build_csrf(options.csrf, f"{field}.csrf", report),
        buffer=build_buffer(options.buffer_per_route, f"{field}.bufferPerRoute", report),
        ext_proc=build_ext_proc_routes(options, field, refs=refs, owner=owner, report=report),
        request_attempt_count=bool(options.include_request_attempt_count),
        attempt_count_in_response=bool(options.include_attempt_count_in_response),
        virtual_clusters=build_virtual_clusters(options.stats, f"{field}.stats", report),
    )
    if len(report.errors) > errors or built == _NO_HOST_TRAFFIC:
        return None
    return built


def build_destination_traffic(
    options: WeightedDestinationOptions | None,
    field: str,
    report: ResourceReport,
    secrets: HeaderSecrets,
) -> ir.DestinationTraffic | None:
    if options is None:
        return None
    errors = len(report.errors)
    refuse_unsupported(options, field, report)
    built = ir.DestinationTraffic(
        headers=build_header_manipulation(
            options.header_manipulation, f"{field}.headerManipulation", report, secrets
        ),
        csrf=build_csrf(options.csrf, f"{field}.csrf", report),
        buffer=build_buffer(options.buffer_per_route, f"{field}.bufferPerRoute", report),
    )
    if len(report.errors) > errors or built == _NO_DESTINATION_TRAFFIC:
        return None
    return built
