"""`jwt` on virtual host options: token verification providers (SPEC.md "JWT provider")."""

from __future__ import annotations

from typing import Literal

from gw.api.duration import Duration
from gw.api.meta import Model, ResourceRef


class LocalJwks(Model):
    """`jwks.local.key`: a PEM public key (or a JWK / JWKS JSON document)."""

    key: str


class RemoteJwks(Model):
    """`jwks.remote`: a key set fetched by Envoy through an Upstream."""

    url: str
    upstream_ref: ResourceRef | None = None
    cache_duration: Duration | None = None


class Jwks(Model):
    local: LocalJwks | None = None
    remote: RemoteJwks | None = None


class TokenHeader(Model):
    header: str
    prefix: str | None = None


class TokenSource(Model):
    headers: list[TokenHeader] = []
    query_params: list[str] = []


class ClaimToHeader(Model):
    claim: str
    header: str
    append: bool = False


class JwtProvider(Model):
    issuer: str | None = None
    audiences: list[str] = []
    jwks: Jwks | None = None
    token_source: TokenSource | None = None
    keep_token: bool = False
    claims_to_headers: list[ClaimToHeader] = []
    clock_skew_seconds: int | None = None
    attach_failed_status_to_metadata: str | None = None


class VhostJwt(Model):
    """`virtualHost.options.jwt`: providers are OR-ed (a token valid for any passes)."""

    providers: dict[str, JwtProvider] = {}
    allow_missing_or_failed_jwt: bool = False
    validation_policy: Literal["REQUIRE_VALID", "ALLOW_MISSING", "ALLOW_MISSING_OR_FAILED"] = (
        "REQUIRE_VALID"
    )


class RouteJwt(Model):
    """`routes[].options.jwt`: `disable: true` turns verification off for one route."""

    disable: bool = False
