"""Packing messages into `google.protobuf.Any`, deterministically; well-known types from IR
values."""

from __future__ import annotations

from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message

from gw.translator.envoy.names import type_url


def pack(message: Message) -> any_pb2.Any:
    """An Any whose bytes are the same for the same message (map order is sorted)."""
    return any_pb2.Any(
        type_url=type_url(type(message)), value=message.SerializeToString(deterministic=True)
    )


def duration(ms: int) -> duration_pb2.Duration:
    """A Duration of `ms` milliseconds (the IR's unit)."""
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)
