"""The rate-limit servers' configuration: each RateLimitConfig's descriptor tree as an xDS
resource.

A `google.protobuf.Struct` named by its `config_id` (`<namespace>.<name>`), served to the
role `<namespace>~ratelimit` on the same ADS server as Envoy's configuration, exactly as
AuthConfigs reach the extauth servers (`extauth_server.py`). The schema and the encoding
are the contract in `gw.wire` (`ratelimit`, `structs`); every None there means its default,
so it is left out.
"""

from __future__ import annotations

from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.wire.structs import to_struct


def build_ratelimit_resources(proxy: ir.Proxy) -> dict[str, dict[str, Message]]:
    """Resources of the ratelimit role: type URL → config id → Struct (always the type, so
    that a server subscribed to it learns that there are no configs)."""
    return {
        names.RATE_LIMIT_CONFIG: {
            c.config_id: to_struct(c, omit_none=True) for c in proxy.rate_limit_configs
        }
    }
