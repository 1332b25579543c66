"""Packing messages into `google.protobuf.Any`, deterministically."""

from __future__ import annotations

from google.protobuf import any_pb2
from google.protobuf.message import Message


def pack(message: Message) -> any_pb2.Any:
    """An Any whose bytes are the same for the same message (map order is sorted)."""
    return any_pb2.Any(
        type_url="type.googleapis.com/" + message.DESCRIPTOR.full_name,
        value=message.SerializeToString(deterministic=True),
    )
