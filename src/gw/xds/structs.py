"""Configuration gw's own components (extauth, rate limit) receive over xDS, as Structs.

The control plane builds each Struct from a translator IR dataclass; the component reads it
back through the same schema. A Struct that does not fit is refused with a ValueError, which
the ADS client turns into a NACK, so the component keeps its last good configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from google.protobuf import any_pb2, json_format, struct_pb2
from pydantic import TypeAdapter, ValidationError

#: The xDS type URL of every component config resource.
TYPE_URL = "type.googleapis.com/google.protobuf.Struct"


class Identified(Protocol):
    @property
    def config_id(self) -> str: ...


Config = TypeVar("Config", bound=Identified)


def parse_structs(
    resources: Sequence[any_pb2.Any], adapter: TypeAdapter[Config], what: str
) -> dict[str, Config]:
    """Configs by `config_id`; raises ValueError naming the first `what` that is bad."""
    out: dict[str, Config] = {}
    for index, resource in enumerate(resources):
        struct = struct_pb2.Struct()
        if not resource.Unpack(struct):
            raise ValueError(f"resource {index} is a {resource.type_url}, not a Struct")
        data = json_format.MessageToDict(struct)
        try:
            config = adapter.validate_python(data)
        except ValidationError as exc:
            name = data.get("config_id", f"#{index}")
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(f"{what} {name}: {problems}") from None
        if config.config_id in out:
            raise ValueError(f"{what} {config.config_id} is there twice")
        out[config.config_id] = config
    return out
