"""`tracing` on a route → `ir.RouteTracing`: the span's name (`routeDescriptor`, answered
to the client unless `propagate: false`) and sampling percentages, each 100% when unset (the
established gateway's defaults). Spans exist only where the listener traces.

A transformation's `spanTransformer` names the span too (both are served as the route's
decorator): where a route has both, the span takes the `spanTransformer`'s name, as the
established gateway's transformation filter renames the span after the decorator named
it, and the route is accepted with a warning that `routeDescriptor` has no effect."""

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


def check_span_name(
    tracing: ir.RouteTracing, span_name: str | None, field: str, report: ResourceReport
) -> None:
    """Warn when the route's transformation names its span over `routeDescriptor`."""
    if tracing.descriptor is None or span_name is None or span_name == tracing.descriptor:
        return
    report.warning(
        f"{field}.routeDescriptor",
        f"routeDescriptor {tracing.descriptor!r} has no effect: the route's transformation "
        f"names the span {span_name!r} (spanTransformer), which wins over routeDescriptor; "
        "remove one of them",
    )
