"""A route's stream clocks besides `timeout` → `ir.StreamTimeouts`: `idleTimeout` (0
switches the listener's stream idle timeout off on the route) and `maxStreamDuration`
(with the gRPC `grpc-timeout` header cap and offset)."""

from __future__ import annotations

from gw.api.duration import duration_ms
from gw.api.virtualservice import RouteOptions
from gw.translator import ir
from gw.translator.reports import ResourceReport

#: What is compared with to tell that nothing is set (made once, not per call).
_NO_TIMEOUTS = ir.StreamTimeouts()


def build_stream_timeouts(
    options: RouteOptions, field: str, report: ResourceReport
) -> ir.StreamTimeouts | None:
    idle = options.idle_timeout
    stream = options.max_stream_duration
    if idle is None and stream is None:
        return None

    def ms(text: str | None) -> int | None:
        return None if text is None else int(duration_ms(text))

    if stream is not None and all(
        v is None
        for v in (
            stream.max_stream_duration,
            stream.grpc_timeout_header_max,
            stream.grpc_timeout_header_offset,
        )
    ):
        report.warning(f"{field}.maxStreamDuration", "empty: no limit is set")
    built = ir.StreamTimeouts(
        idle_ms=ms(idle),
        max_stream_ms=ms(stream.max_stream_duration) if stream else None,
        grpc_timeout_header_max_ms=ms(stream.grpc_timeout_header_max) if stream else None,
        grpc_timeout_header_offset_ms=ms(stream.grpc_timeout_header_offset) if stream else None,
    )
    return None if built == _NO_TIMEOUTS else built
