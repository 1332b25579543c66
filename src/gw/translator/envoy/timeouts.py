"""`ir.StreamTimeouts` → the idle timeout and max stream duration of an Envoy RouteAction."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.translator import ir
from gw.translator.envoy.matching import milliseconds


def add_stream_timeouts(action: rc_pb2.RouteAction, timeouts: ir.StreamTimeouts) -> None:
    if timeouts.idle_ms is not None:
        action.idle_timeout.CopyFrom(milliseconds(timeouts.idle_ms))
    stream = action.max_stream_duration
    if timeouts.max_stream_ms is not None:
        stream.max_stream_duration.CopyFrom(milliseconds(timeouts.max_stream_ms))
    if timeouts.grpc_timeout_header_max_ms is not None:
        stream.grpc_timeout_header_max.CopyFrom(milliseconds(timeouts.grpc_timeout_header_max_ms))
    if timeouts.grpc_timeout_header_offset_ms is not None:
        stream.grpc_timeout_header_offset.CopyFrom(
            milliseconds(timeouts.grpc_timeout_header_offset_ms)
        )
