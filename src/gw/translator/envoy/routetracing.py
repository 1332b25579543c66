"""`ir.RouteTracing` → an Envoy route's decorator (the span's name) and tracing sampling."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.translator import ir
from gw.translator.envoy.matching import fractional_percent


def add_route_tracing(route: rc_pb2.Route, tracing: ir.RouteTracing) -> None:
    route.tracing.CopyFrom(
        rc_pb2.Tracing(
            client_sampling=fractional_percent(tracing.client_sampling),
            random_sampling=fractional_percent(tracing.random_sampling),
            overall_sampling=fractional_percent(tracing.overall_sampling),
        )
    )
    if tracing.descriptor is not None:
        route.decorator.operation = tracing.descriptor
        if tracing.propagate is not None:
            route.decorator.propagate.value = tracing.propagate
