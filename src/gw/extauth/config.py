"""What the extauth server receives over xDS: resolved AuthConfigs, as Structs of the
schema `gw.wire.extauth` (see `gw.wire.structs`)."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import any_pb2
from pydantic import TypeAdapter

from gw.wire.extauth import AuthConfig
from gw.wire.structs import TYPE_URL, parse_structs

__all__ = ["TYPE_URL", "parse_resources"]

_ADAPTER: TypeAdapter[AuthConfig] = TypeAdapter(AuthConfig)


def parse_resources(resources: Sequence[any_pb2.Any]) -> dict[str, AuthConfig]:
    """Configs by `config_id`; raises ValueError naming the first resource that is bad."""
    return parse_structs(resources, _ADAPTER, "auth config")
