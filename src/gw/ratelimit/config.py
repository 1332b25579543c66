"""What the rate-limit server receives over xDS: RateLimitConfigs' descriptor trees, as
Structs of the schema `gw.wire.ratelimit.RateLimitConfig` (see `gw.wire.structs`)."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import any_pb2
from pydantic import TypeAdapter

from gw.wire.ratelimit import RateLimitConfig
from gw.wire.structs import TYPE_URL, parse_structs

__all__ = ["TYPE_URL", "parse_resources"]

_ADAPTER: TypeAdapter[RateLimitConfig] = TypeAdapter(RateLimitConfig)


def parse_resources(resources: Sequence[any_pb2.Any]) -> dict[str, RateLimitConfig]:
    """Configs by `config_id`; raises ValueError naming the first resource that is bad."""
    return parse_structs(resources, _ADAPTER, "rate limit config")
