"""AuthConfig (`enterprise.gw.vendor.io/v1`): how the extauth server authenticates."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model, Resource, ResourceRef


class CookieOptions(Model):
    max_age: int | None = None
    not_secure: bool = False
    http_only: bool | None = None
    path: str | None = None
    same_site: Literal["DefaultMode", "LaxMode", "StrictMode", "NoneMode"] | None = None
    domain: str | None = None


class StoreOptions(Model):
    """Where the session store (Redis) listens: `host` is `host:port`."""

    host: str
    db: int = 0
    pool_size: int | None = None
    socket_type: Literal["TCP", "TLS"] | None = None


class SessionStore(Model):
    """`session.store`: tokens kept server-side, only a handle in the cookie."""

    cookie_name: str = "__session"
    options: StoreOptions
    key_prefix: str | None = None
    allow_refreshing: bool | None = None
    pre_expiry_buffer: Duration | None = None
    target_domain: str | None = None
    header_name: str | None = None


class CookieSession(Model):
    allow_refreshing: bool = False
    key_prefix: str | None = None
    target_domain: str | None = None


class UserSession(Model):
    fail_on_fetch_failure: bool = False
    cookie_options: CookieOptions | None = None
    cookie: CookieSession | None = None
    store: SessionStore | None = None


class OidcHeaders(Model):
    id_token_header: str | None = None
    access_token_header: str | None = None
    use_bearer_schema_for_authorization: bool | None = None


class DiscoveryOverride(Model):
    auth_endpoint: str | None = None
    token_endpoint: str | None = None
    jwks_uri: str | None = None
    end_session_endpoint: str | None = None
    revocation_endpoint: str | None = None
    scopes: list[str] = []


class OidcAuthorizationCode(Model):
    app_url: str
    callback_path: str
    client_id: str
    client_secret_ref: ResourceRef | None = None
    disable_client_secret: bool = False
    issuer_url: str
    discovery_override: DiscoveryOverride | None = None
    discovery_poll_interval: Duration | None = None
    scopes: list[str] = []
    session: UserSession | None = None
    headers: OidcHeaders | None = None
    logout_path: str | None = None
    after_logout_url: str | None = None
    auth_endpoint_query_params: dict[str, str] = {}
    token_endpoint_query_params: dict[str, str] = {}


class OAuth2(Model):
    oidc_authorization_code: OidcAuthorizationCode | None = None


class AuthConfigEntry(Model):
    name: str | None = None
    oauth2: OAuth2 | None = None


class AuthConfigSpec(Model):
    configs: list[AuthConfigEntry] = Field(min_length=1)
    boolean_expr: str | None = None
    fail_on_redirect: bool = False


class AuthConfig(Resource):
    API_VERSION: ClassVar[str] = "enterprise.gw.vendor.io/v1"
    KIND: ClassVar[str] = "AuthConfig"
    PLURAL: ClassVar[str] = "authconfigs"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ac",)

    spec: AuthConfigSpec
