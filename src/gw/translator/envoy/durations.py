"""Milliseconds (how the IR keeps durations) → protobuf Durations."""

from __future__ import annotations

from google.protobuf import duration_pb2


def duration_ms(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)
