"""How the contracts of this package travel over xDS: as `google.protobuf.Struct`s.

The control plane turns each config (a frozen dataclass with a `config_id`) into a Struct
(`to_struct`), served under `TYPE_URL` and named by its `config_id`, which is also inside
the Struct since state-of-the-world responses carry no names. A server reads the Structs of
a response back into the same dataclass (`parse_structs`). A Struct rather than messages of
our own: the dataclasses are the schema, and no generated protobuf code is needed. A Struct
that does not fit is refused with a ValueError, which the ADS client turns into a NACK, so
the server keeps its last good configuration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from google.protobuf import any_pb2, json_format, struct_pb2
from pydantic import TypeAdapter, ValidationError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: The xDS type URL of every config resource of gw's own servers.
TYPE_URL = "type.googleapis.com/google.protobuf.Struct"


class Identified(Protocol):
    @property
    def config_id(self) -> str: ...


Config = TypeVar("Config", bound=Identified)


def to_struct(config: DataclassInstance, *, omit_none: bool = False) -> struct_pb2.Struct:
    """`config` as a Struct: tuples become lists. A None stays a null, since for some fields
    None means something else than the default (`CookieOptions.path`); `omit_none` leaves
    every None out, for types where each None field means its default."""
    out = struct_pb2.Struct()
    out.update(_plain(dataclasses.asdict(config), omit_none))
    return out


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


def _plain(value: Any, omit_none: bool) -> Any:
    """Tuples to lists (a Struct holds lists), None left out when `omit_none`."""
    if isinstance(value, Mapping):
        return {k: _plain(v, omit_none) for k, v in value.items() if v is not None or not omit_none}
    if isinstance(value, list | tuple):
        return [_plain(v, omit_none) for v in value]
    return value
