"""`jwt` on virtual host options: token verification providers (SPEC.md "JWT provider").

SPEC.md names `issuer`, `jwks.local.key`, `jwks.remote.url` + `upstreamRef`,
`tokenSource.headers[].header` and `claimsToHeaders`; the rest are the established gateway's
fields (REFERENCE.md §4.2), so that its manifests load unchanged.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model, ResourceRef


class LocalJwks(Model):
    """`jwks.local.key`: a PEM public key (RSA or EC), or a JWK / JWKS JSON document."""

    key: str


class RemoteJwks(Model):
    """`jwks.remote`: a key set Envoy fetches from `url` through the Upstream
    `upstreamRef`, keeps for `cacheDuration` (default 5m) and refetches after."""

    url: str
    upstream_ref: ResourceRef | None = None
    cache_duration: Duration | None = None


class Jwks(Model):
    """Exactly one of `local` and `remote`."""

    local: LocalJwks | None = None
    remote: RemoteJwks | None = None


class TokenHeader(Model):
    """A header that carries the token, after an optional `prefix` (e.g. `Bearer `)."""

    header: str
    prefix: str | None = None


class TokenSource(Model):
    """Where the token is looked for; unset means `Authorization: Bearer` and the
    `access_token` query parameter."""

    headers: list[TokenHeader] = []
    query_params: list[str] = []


class ClaimToHeader(Model):
    """Copies a verified claim into a request header (any client copy is removed first)."""

    claim: str
    header: str
    append: bool = False


class JwtProvider(Model):
    issuer: str | None = None
    audiences: list[str] = []
    jwks: Jwks | None = None
    token_source: TokenSource | None = None
    #: False (the default) removes the token from the request before it goes upstream.
    keep_token: bool = False
    claims_to_headers: list[ClaimToHeader] = []
    clock_skew_seconds: int | None = Field(default=None, ge=0)
    #: Dynamic metadata key (under the jwt_authn filter) for the failure status.
    attach_failed_status_to_metadata: str | None = None


class VhostJwt(Model):
    """`virtualHost.options.jwt` (deprecated: the same as `jwtStaged.afterExtAuth`), a stage
    of `jwtStaged`, or of a route's `jwtProvidersStaged`: providers are OR-ed (a token valid
    for any passes)."""

    providers: dict[str, JwtProvider] = {}
    allow_missing_or_failed_jwt: bool = False
    validation_policy: Literal["REQUIRE_VALID", "ALLOW_MISSING", "ALLOW_MISSING_OR_FAILED"] = (
        "REQUIRE_VALID"
    )


class RouteJwt(Model):
    """`routes[].options.jwt` (deprecated: the after-extauth stage) or a stage of a route's
    `jwtStaged`: `disable: true` turns the virtual host's verification off for one route."""

    disable: bool = False


class JwtStagedVhost(Model):
    """`virtualHost.options.jwtStaged`, and a route's `jwtProvidersStaged`: a check before
    the extauth filter, one after it, or both (a request then needs a token for each)."""

    before_ext_auth: VhostJwt | None = None
    after_ext_auth: VhostJwt | None = None


class JwtStagedRoute(Model):
    """`routes[].options.jwtStaged`: turns the host's check of a stage off for one route."""

    before_ext_auth: RouteJwt | None = None
    after_ext_auth: RouteJwt | None = None
