"""The resolved AuthConfig: what the extauth server is configured with.

Stage 1 checks an AuthConfig and fills in everything the server needs at run time (secrets,
defaults, the exact request paths of a login's callback and logout); the control plane
serves it over xDS to the role `<namespace>~extauth` (`structs`), and the extauth server
reads it back into these same types. Plain frozen dataclasses: no API models, no protobuf.

Each kind of check is a frozen dataclass in a module of its own, named after the kind
(`extauth_oidc.py`), which the AuthConfig holds in a field of that name. A new kind is one
more module, one more field here, the stage-1 code that fills it and the server code that
runs it; the Struct encoding follows the dataclasses by itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from gw.wire.extauth_oidc import OidcAuthorizationCode


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthConfig:
    """One AuthConfig, addressed by Envoy's `context_extensions.config_id`."""

    config_id: str  # `<namespace>.<name>`
    namespace: str
    name: str
    oidc: OidcAuthorizationCode
