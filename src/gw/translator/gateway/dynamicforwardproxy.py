"""Routes whose upstream the request names: `routeAction.dynamicForwardProxy` (Envoy's
dynamic forward proxy resolves the request's host, or the one `hostRewrite` /
`autoHostRewriteHeader` gives, through its DNS cache; the listener gets the filter and the
cluster when some route uses it, with the DNS cache's defaults) and
`routeAction.clusterHeader` (the request header holds the name of the cluster, as gw names
them: `<upstream>_<namespace>`)."""

from __future__ import annotations

from dataclasses import dataclass

from gw.api.virtualservice import RouteAction
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem
from gw.translator.reports import ResourceReport


@dataclass(frozen=True, slots=True)
class RequestTarget:
    """Where a route sends requests whose upstream they name themselves."""

    cluster_header: str | None = None
    dynamic_forward_proxy: ir.DynamicForwardProxy | None = None


def request_target(action: RouteAction, field: str, report: ResourceReport) -> RequestTarget | None:
    """The target when the action is `clusterHeader` or `dynamicForwardProxy` (None when it
    is neither, or after an error: `report` says which)."""
    if action.cluster_header is not None:
        header = action.cluster_header
        problem = header_name_problem(header) if header else "the header name is empty"
        if problem is not None:
            report.error(f"{field}.clusterHeader", problem)
            return None
        return RequestTarget(cluster_header=header.lower())
    dfp = action.dynamic_forward_proxy
    if dfp is None:
        return None
    where = f"{field}.dynamicForwardProxy"
    if dfp.host_rewrite is not None and dfp.auto_host_rewrite_header is not None:
        report.error(where, "set at most one of hostRewrite and autoHostRewriteHeader")
        return None
    rewrite_header = dfp.auto_host_rewrite_header
    if rewrite_header is not None:
        problem = (
            header_name_problem(rewrite_header) if rewrite_header else "the header name is empty"
        )
        if problem is not None:
            report.error(f"{where}.autoHostRewriteHeader", problem)
            return None
    if dfp.host_rewrite is not None and not dfp.host_rewrite.strip():
        report.error(f"{where}.hostRewrite", "the host is empty")
        return None
    return RequestTarget(
        dynamic_forward_proxy=ir.DynamicForwardProxy(
            host_rewrite=dfp.host_rewrite,
            host_header=rewrite_header.lower() if rewrite_header else None,
        )
    )


def destinations_set(action: RouteAction) -> list[str]:
    """The destination kinds an action sets (a route needs exactly one)."""
    return [
        name
        for name, value in (
            ("single", action.single),
            ("multi", action.multi),
            ("upstreamGroup", action.upstream_group),
            ("clusterHeader", action.cluster_header),
            ("dynamicForwardProxy", action.dynamic_forward_proxy),
        )
        if value is not None
    ]
