"""The extauth servers' configuration: resolved AuthConfigs as xDS resources.

Each AuthConfig is a `google.protobuf.Struct` named by its `config_id` (`<namespace>.<name>`),
served to the role `<namespace>~extauth` on the same ADS server as Envoy's configuration.
The schema and the encoding are the contract in `gw.wire` (`extauth`, `structs`): the server
reads the Struct back into the same dataclasses and NACKs what does not fit.
"""

from __future__ import annotations

from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.wire.extauth import AuthConfig
from gw.wire.structs import to_struct


def build_extauth_resources(proxy: ir.Proxy) -> dict[str, dict[str, Message]]:
    """Resources of the extauth role: type URL → config id → Struct (always the type, so
    that a server subscribed to it learns that there are no configs)."""
    return {names.AUTH_CONFIG: {a.config_id: _struct(a) for a in proxy.auth_configs}}


def _struct(config: AuthConfig) -> Message:
    """An AuthConfig without a session pass has no `session_pass` key (the servers read
    an absent key as None), so Settings without one serve exactly what they did before."""
    out = to_struct(config)
    if config.session_pass is None:
        del out.fields["session_pass"]
    return out
