"""What the rate-limit server receives over xDS: RateLimitConfigs' descriptor trees, as
Structs (schema: `gw.translator.ir_ratelimit.RateLimitConfig`). A Struct that does not fit is
refused, which the ADS client turns into a NACK: the last good configuration stays."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import any_pb2, json_format, struct_pb2
from pydantic import TypeAdapter, ValidationError

from gw.translator.ir_ratelimit import RateLimitConfig

TYPE_URL = "type.googleapis.com/google.protobuf.Struct"
DEFAULT_ROLE = "gw-system~ratelimit"

_ADAPTER: TypeAdapter[RateLimitConfig] = TypeAdapter(RateLimitConfig)


def parse_resources(resources: Sequence[any_pb2.Any]) -> dict[str, RateLimitConfig]:
    """Configs by `config_id`; raises ValueError naming the first resource that is bad."""
    out: dict[str, RateLimitConfig] = {}
    for index, resource in enumerate(resources):
        struct = struct_pb2.Struct()
        if not resource.Unpack(struct):
            raise ValueError(f"resource {index} is a {resource.type_url}, not a Struct")
        data = json_format.MessageToDict(struct)
        try:
            config = _ADAPTER.validate_python(data)
        except ValidationError as exc:
            name = data.get("config_id", f"#{index}")
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(f"rate limit config {name}: {problems}") from None
        if config.config_id in out:
            raise ValueError(f"rate limit config {config.config_id} is there twice")
        out[config.config_id] = config
    return out
