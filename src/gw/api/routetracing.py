"""`tracing` on a route: the span's name (`routeDescriptor`) and sampling. Spans are sent
only when the listener traces (the Gateway's `httpConnectionManagerSettings.tracing`)."""

from __future__ import annotations

from gw.api.meta import Model


class TracePercentages(Model):
    client_sample_percentage: float | None = None
    random_sample_percentage: float | None = None
    overall_sample_percentage: float | None = None


class RouteTracingSettings(Model):
    route_descriptor: str = ""
    trace_percentages: TracePercentages | None = None
    propagate: bool | None = None
