"""The rate-limit servers' configuration: each RateLimitConfig's descriptor tree as an xDS
resource.

A `google.protobuf.Struct` named by its `config_id` (`<namespace>.<name>`, also inside the
Struct), served to the role `<namespace>~ratelimit` on the same ADS server as Envoy's
configuration, exactly as AuthConfigs reach the extauth servers (`extauth_server.py`). The
schema is `ir_ratelimit.RateLimitConfig`: the server reads the Struct back into it and NACKs
what does not fit.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.message import Message

from gw.translator import ir, ir_ratelimit
from gw.translator.envoy import names


def build_ratelimit_resources(proxy: ir.Proxy) -> dict[str, dict[str, Message]]:
    """Resources of the ratelimit role: type URL → config id → Struct (always the type, so
    that a server subscribed to it learns that there are no configs)."""
    return {
        names.RATE_LIMIT_CONFIG: {c.config_id: config_struct(c) for c in proxy.rate_limit_configs}
    }


def config_struct(config: ir_ratelimit.RateLimitConfig) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(_plain(dataclasses.asdict(config)))
    return out


def _plain(value: Any) -> Any:
    """Tuples to lists, None left out (a Struct holds lists; absent means the default)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
