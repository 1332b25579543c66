"""`oauth2.accessTokenValidation` of an AuthConfig: requests carry an access token
(`Authorization: Bearer ...`) that an identity provider issued, validated either at its
introspection endpoint (`introspection`, or the older `introspectionUrl`) or as a JWT with
its key set (`jwt`), optionally with required scopes and the provider's userinfo."""

from __future__ import annotations

from typing import Any

from gw.api.authconfig_oidc import ClaimToHeader
from gw.api.duration import Duration
from gw.api.meta import Empty, Model, ResourceRef


class RemoteJwks(Model):
    url: str
    refresh_interval: Duration | None = None


class LocalJwks(Model):
    inline_string: str


class JwtValidation(Model):
    remote_jwks: RemoteJwks | None = None
    local_jwks: LocalJwks | None = None
    issuer: str = ""
    audiences: list[str] = []


class IntrospectionValidation(Model):
    introspection_url: str
    client_id: str = ""
    client_secret_ref: ResourceRef | None = None
    user_id_attribute_name: str = ""
    disable_client_secret: bool | None = None


class ScopeList(Model):
    scope: list[str] = []


class AccessTokenValidation(Model):
    #: The older spelling of `introspection.introspectionUrl`, without client credentials.
    introspection_url: str | None = None
    jwt: JwtValidation | None = None
    introspection: IntrospectionValidation | None = None
    userinfo_url: str = ""
    cache_timeout: Duration | None = None
    required_scopes: ScopeList | None = None
    dynamic_metadata_from_claims: dict[str, str] = {}
    claims_to_headers: list[ClaimToHeader] = []
    default: Empty | None = None
    #: Accepted as data so that stage 1 can refuse it by name.
    azure: dict[str, Any] | None = None
