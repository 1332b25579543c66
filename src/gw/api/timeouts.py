"""`maxStreamDuration` on a route (with `timeout` and `idleTimeout`, the route's clocks)."""

from __future__ import annotations

from gw.api.duration import Duration
from gw.api.meta import Model


class MaxStreamDuration(Model):
    max_stream_duration: Duration | None = None
    grpc_timeout_header_max: Duration | None = None
    grpc_timeout_header_offset: Duration | None = None
