"""JWT verification of a virtual host or route: the providers (issuer, audiences, keys
inline or fetched by the proxy), where tokens are found, and which claims become headers.

Verification happens in two stages, before and after the extauth filter; a host checks in
either or both (`VirtualHost.jwt_before_extauth`, `VirtualHost.jwt`), and a route may
replace or switch off its host's check of a stage (`Route.jwt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenHeader:
    name: str
    prefix: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimToHeader:
    claim: str  # a nested claim is written with dots: `org.id`
    header: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoteJwks:
    """A key set the proxy fetches itself from `url` through `cluster`, keeps for
    `cache_duration_ms`, and refetches in the background (retrying after failures)."""

    url: str
    cluster: str
    cache_duration_ms: int = 300_000
    timeout_ms: int = 5000


@dataclass(frozen=True, slots=True, kw_only=True)
class JwtProvider:
    """One verifier. `name` is unique on the listener (`<virtual host>_<provider>`); the
    verified payload is kept under it, which is where RBAC principals look for claims.
    Exactly one of `local_jwks` (a JWKS JSON document) and `remote_jwks` is set. Empty
    `headers` and `query_params` mean the default locations."""

    name: str
    issuer: str
    audiences: tuple[str, ...] = ()
    local_jwks: str | None = None
    remote_jwks: RemoteJwks | None = None
    headers: tuple[TokenHeader, ...] = ()
    query_params: tuple[str, ...] = ()
    forward_token: bool = False
    claims_to_headers: tuple[ClaimToHeader, ...] = ()
    clock_skew_seconds: int = 60
    failed_status_metadata_key: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JwtVerification:
    """A virtual host's JWT check: a token valid for any provider passes. `require`:
    `valid` (the default), `allow_missing` (no token passes, a bad one fails) or
    `allow_missing_or_failed` (never blocks; claims are there when a token verified)."""

    providers: tuple[JwtProvider, ...]
    require: Literal["valid", "allow_missing", "allow_missing_or_failed"] = "valid"


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteJwtStage:
    """What a route does at one stage: its own `verification` (`jwtProvidersStaged`)
    replaces the host's there; else `disabled` switches the host's off."""

    verification: JwtVerification | None = None
    disabled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteJwt:
    """A route's JWT at each stage; None: the host's check of that stage applies."""

    before_extauth: RouteJwtStage | None = None
    after_extauth: RouteJwtStage | None = None
