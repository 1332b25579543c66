"""`oauth2.accessTokenValidation`: a request's access token (`Authorization: Bearer ...`),
validated at the identity provider's introspection endpoint (RFC 7662) or as a JWT with the
provider's key set, resolved by stage 1 (the client secret read, defaults applied).

A validated token gives claims (the JWT's payload, or the introspection answer merged with
the userinfo answer); `required_scopes` must all be in its `scope`; `claims_to_headers` and
`dynamic_metadata_from_claims` copy claims onward. Answers are cached per token for
`cache_timeout_ms` (0: never), never past the token's `exp`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gw.wire.extauth_oidc import ClaimToHeader

#: Where the validated token's claims go in the chain's state.
JWT_STATE_KEY = "jwtAccessToken"
INTROSPECTION_STATE_KEY = "introspection"


@dataclass(frozen=True, slots=True, kw_only=True)
class Introspection:
    url: str
    #: Client credentials, sent as HTTP Basic; a client id alone (`disableClientSecret`)
    #: goes as the form field `client_id`; neither: no client authentication.
    client_id: str = ""
    client_secret: str = field(default="", repr=False)
    #: The answer's attribute naming the user (`sub`, `username`); "" identifies no one.
    user_id_attribute: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class JwtValidation:
    #: Exactly one of the two: a key set fetched from `remote_jwks_url` every
    #: `refresh_interval_ms`, or one given inline (JSON).
    remote_jwks_url: str = ""
    refresh_interval_ms: int = 300_000
    local_jwks: str = ""
    #: "" skips the checks.
    issuer: str = ""
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessTokenValidation:
    kind: Literal["access_token"] = "access_token"
    introspection: Introspection | None = None
    jwt: JwtValidation | None = None
    userinfo_url: str = ""
    cache_timeout_ms: int = 600_000
    required_scopes: tuple[str, ...] = ()
    dynamic_metadata_from_claims: tuple[tuple[str, str], ...] = ()
    claims_to_headers: tuple[ClaimToHeader, ...] = ()
