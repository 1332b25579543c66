"""`tracing` on a route → `ir.RouteTracing`: the span's name (`routeDescriptor`, passed
upstream unless `propagate: false`) and sampling percentages, each 100% when unset (the
established gateway's defaults). Spans exist only where the listener traces."""

from __future__ import annotations

from gw.api.routetracing import RouteTracingSettings
from gw.translator import ir
from gw.translator.gateway.matching import per_million, percentage
from gw.translator.reports import ResourceReport

_ALL = per_million(100.0)


def build_route_tracing(
    tracing: RouteTracingSettings | None, field: str, report: ResourceReport
) -> ir.RouteTracing | None:
    if tracing is None:
        return None
    errors = len(report.errors)
    shares = tracing.trace_percentages
    where = f"{field}.tracePercentages"

    def share(value: float | None, name: str) -> ir.Fraction:
        return percentage(value, f"{where}.{name}", report) or _ALL

    client = share(shares.client_sample_percentage if shares else None, "clientSamplePercentage")
    random = share(shares.random_sample_percentage if shares else None, "randomSamplePercentage")
    overall = share(shares.overall_sample_percentage if shares else None, "overallSamplePercentage")
    if len(report.errors) > errors:
        return None
    return ir.RouteTracing(
        descriptor=tracing.route_descriptor or None,
        propagate=tracing.propagate if tracing.route_descriptor else None,
        client_sampling=client,
        random_sampling=random,
        overall_sampling=overall,
    )
