"""The extauth servers' configuration: resolved AuthConfigs as xDS resources.

Each AuthConfig is a `google.protobuf.Struct` named by its `config_id` (`<namespace>.<name>`,
also inside the Struct, since state-of-the-world responses carry no names), served to the
role `<namespace>~extauth` on the same ADS server as Envoy's configuration. A Struct rather
than a message of our own: the schema is `ir_extauth` (the server reads the Struct back into
those dataclasses and NACKs what does not fit), and no generated protobuf code is needed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.message import Message

from gw.translator import ir, ir_extauth
from gw.translator.envoy import names


def build_extauth_resources(proxy: ir.Proxy) -> dict[str, dict[str, Message]]:
    """Resources of the extauth role: type URL → config id → Struct (always the type, so
    that a server subscribed to it learns that there are no configs)."""
    return {names.AUTH_CONFIG: {a.config_id: auth_config_struct(a) for a in proxy.auth_configs}}


def auth_config_struct(auth_config: ir_extauth.AuthConfig) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(_plain(dataclasses.asdict(auth_config)))
    return out


def _plain(value: Any) -> Any:
    """Tuples to lists: a Struct holds lists (None stays: it is a value, not "unset")."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
