"""A route's stream clocks besides its request `timeout`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamTimeouts:
    #: Longest silence on the stream (0: none, even if the listener has one).
    idle_ms: int | None = None
    #: Longest life of the stream.
    max_stream_ms: int | None = None
    #: gRPC: `grpc-timeout` used as the stream's limit, capped at this (0: uncapped).
    grpc_timeout_header_max_ms: int | None = None
    #: gRPC: subtracted from `grpc-timeout`.
    grpc_timeout_header_offset_ms: int | None = None
