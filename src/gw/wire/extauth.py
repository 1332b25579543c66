"""The resolved AuthConfig: what the extauth server is configured with.

Stage 1 checks an AuthConfig and fills in everything the server needs at run time (secrets,
defaults, the exact request paths of a login's callback and logout); the control plane
serves it over xDS to the role `<namespace>~extauth` (`structs`), and the extauth server
reads it back into these same types. Plain frozen dataclasses: no API models, no protobuf.

An AuthConfig is a chain of `Step`s (`spec.configs[]`), each one kind of check: a frozen
dataclass in a module of its own named after the kind (`extauth_oidc.py`,
`extauth_basic.py`, ...) whose `kind` field tells the kinds apart on the wire. A new kind is
one more module and one more member of `Check`, the stage-1 code that fills it and the
server code that runs it (`gw.extauth.checks` dispatches on the type); the Struct encoding
follows the dataclasses by itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from gw.wire.extauth_accesstoken import AccessTokenValidation
from gw.wire.extauth_apikey import ApiKeyAuth
from gw.wire.extauth_basic import BasicAuth
from gw.wire.extauth_jwt import JwtStep
from gw.wire.extauth_ldap import Ldap
from gw.wire.extauth_oidc import OidcAuthorizationCode
from gw.wire.extauth_opa import OpaAuth
from gw.wire.extauth_pass import SessionPass
from gw.wire.extauth_passthrough import PassThroughAuth

#: Every kind of check, told apart by its `kind` field.
Check = (
    OidcAuthorizationCode
    | BasicAuth
    | ApiKeyAuth
    | PassThroughAuth
    | JwtStep
    | AccessTokenValidation
    | OpaAuth
    | Ldap
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One entry of `spec.configs`: its name (`config_<index>` unless named), for
    `boolean_expr` and logs, and its check."""

    name: str
    check: Check


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthConfig:
    """One AuthConfig, addressed by Envoy's `context_extensions.config_id`."""

    config_id: str  # `<namespace>.<name>`
    namespace: str
    name: str
    steps: tuple[Step, ...]
    #: `spec.booleanExpr` as written (checked in stage 1, parsed by `extauth_expr`); None:
    #: every step, in order, must allow.
    boolean_expr: str | None = None
    #: Settings `extauth.userIdHeader`: the header that carries the user a step identified
    #: (an API key's secret name); removed from requests that did not set it.
    user_id_header: str | None = None
    #: Settings `extauth.sessionPass` for this AuthConfig (`extauth_pass`); None: no pass
    #: (left out of the Struct, so AuthConfigs without one read as before).
    session_pass: SessionPass | None = None
