"""`oauth2.oidcAuthorizationCode` of an AuthConfig: an OpenID Connect login (authorization
code flow) with its session (cookies or Redis), as the established API spells it.

Fields gw does not act on are still typed here, so that a manifest that uses them loads and
stage 1 can refuse them by name (`translator/gateway/authconfig_oidc.py`).
"""

from __future__ import annotations

from typing import Any, Literal

from gw.api.duration import Duration
from gw.api.meta import Empty, Model, ResourceRef


class CookieOptions(Model):
    max_age: int | None = None
    not_secure: bool = False
    http_only: bool | None = None
    path: str | None = None
    same_site: Literal["DefaultMode", "LaxMode", "StrictMode", "NoneMode"] | None = None
    domain: str | None = None


class RedisOptions(Model):
    """Where the session store (Redis) listens: `host` is `host:port`."""

    host: str
    db: int = 0
    pool_size: int | None = None
    tls_cert_mount_path: str | None = None
    socket_type: Literal["TCP", "TLS"] | None = None


class RedisSession(Model):
    """`session.redis` (also read as `session.store`): tokens kept server-side, only a
    handle in the cookie."""

    cookie_name: str | None = None
    options: RedisOptions
    key_prefix: str | None = None
    allow_refreshing: bool | None = None
    pre_expiry_buffer: Duration | None = None
    target_domain: str | None = None
    header_name: str | None = None


class CookieSession(Model):
    allow_refreshing: bool | None = None
    key_prefix: str | None = None
    target_domain: str | None = None


class CipherConfig(Model):
    """`session.cipherConfig`: a cookie session's cookies hold their tokens encrypted with
    the 32-byte key of an encryption key secret (`keyRef`)."""

    key_ref: ResourceRef | None = None


class UserSession(Model):
    fail_on_fetch_failure: bool = False
    cookie_options: CookieOptions | None = None
    cookie: CookieSession | None = None
    redis: RedisSession | None = None
    #: The name earlier gw releases read; `redis` is the established one.
    store: RedisSession | None = None
    cipher_config: CipherConfig | None = None


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
    response_types: list[str] = []
    subjects: list[str] = []
    id_token_algs: list[str] = []
    auth_methods: list[str] = []
    claims: list[str] = []


class JwksCacheRefreshPolicy(Model):
    never: Empty | None = None
    always: Empty | None = None
    max_idp_req_per_polling_interval: int | None = None


class ClaimToHeader(Model):
    claim: str
    header: str
    append: bool = False


class TokenClaims(Model):
    """`identityToken` / `accessToken`: claims copied into request headers."""

    claims_to_headers: list[ClaimToHeader] = []


class AutoMapFromMetadata(Model):
    namespace: str | None = None


class EndSessionProperties(Model):
    method_type: Literal["GetMethod", "PostMethod"] = "GetMethod"


class FrontChannelLogout(Model):
    path: str


class ClientSecretAuthentication(Model):
    client_secret_ref: ResourceRef | None = None
    disable_client_secret: bool | None = None


class ClientAuthentication(Model):
    client_secret: ClientSecretAuthentication | None = None
    private_key_jwt: dict[str, Any] | None = None


class OidcAuthorizationCode(Model):
    app_url: str
    callback_path: str
    client_id: str
    client_secret_ref: ResourceRef | None = None
    disable_client_secret: bool | None = None
    client_authentication: ClientAuthentication | None = None
    issuer_url: str
    discovery_override: DiscoveryOverride | None = None
    discovery_poll_interval: Duration | None = None
    jwks_cache_refresh_policy: JwksCacheRefreshPolicy | None = None
    scopes: list[str] = []
    session: UserSession | None = None
    headers: OidcHeaders | None = None
    logout_path: str | None = None
    after_logout_url: str | None = None
    auth_endpoint_query_params: dict[str, str] = {}
    token_endpoint_query_params: dict[str, str] = {}
    session_id_header_name: str | None = None
    parse_callback_path_as_regex: bool = False
    auto_map_from_metadata: AutoMapFromMetadata | None = None
    end_session_properties: EndSessionProperties | None = None
    dynamic_metadata_from_claims: dict[str, str] = {}
    access_token: TokenClaims | None = None
    identity_token: TokenClaims | None = None
    front_channel_logout: FrontChannelLogout | None = None
    default: Empty | None = None
    azure: dict[str, Any] | None = None
