"""An AuthConfig's OIDC authorization-code login, resolved: the relying party, its identity
provider, and where its sessions live (cookies, or Redis).

`callback_path`, `logout_path` and `front_channel_logout_path` are request paths as the
browser sends them (without the query), checked against the other AuthConfigs in stage 1;
the client secret is read from its OAuth secret there. Plain frozen dataclasses: no API
models, no protobuf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: Cookie `Max-Age` when `cookieOptions.maxAge` is not set: 30 days.
DEFAULT_COOKIE_MAX_AGE = 2_592_000


@dataclass(frozen=True, slots=True, kw_only=True)
class CookieOptions:
    """Attributes of every cookie the server sets. `max_age` 0 makes session cookies;
    `path`/`domain` None leave the attribute out; `same_site` None leaves it out (Lax)."""

    max_age: int = DEFAULT_COOKIE_MAX_AGE
    secure: bool = True
    http_only: bool = True
    path: str | None = "/"
    same_site: Literal["Lax", "Strict", "None"] | None = None
    domain: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RedisStore:
    """`session.store`: tokens in Redis under `key_prefix + <session id>`; the browser holds
    only the session id, in the cookie `cookie_name`."""

    host: str
    port: int
    db: int = 0
    tls: bool = False
    pool_size: int | None = None
    cookie_name: str = "__session"
    key_prefix: str = ""
    pre_expiry_buffer_ms: int = 2000


@dataclass(frozen=True, slots=True, kw_only=True)
class Session:
    fail_on_fetch_failure: bool = False
    allow_refreshing: bool = False
    cookie: CookieOptions = CookieOptions()
    #: Cookie sessions only: cookie names become `<cookie_prefix>_id_token` etc.
    cookie_prefix: str = ""
    store: RedisStore | None = None
    #: `targetDomain`: requests for another host are refused (RFC 6265 domain matching).
    target_domain: str | None = None
    #: `redis.headerName` / `sessionIdHeaderName`: the token request of a login carries the
    #: new session's id in this header.
    session_id_header: str | None = None
    #: `cipherConfig` (cookie sessions): the 32-byte key (base64) the cookies' tokens are
    #: encrypted with (AES-256-GCM).
    cipher_key: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimToHeader:
    """A claim of a verified token copied into a request header (`append`: added to a
    value the request has, else it replaces it)."""

    claim: str
    header: str
    append: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OidcAuthorizationCode:
    """An OIDC relying party. `callback_path` and `logout_path` are request paths as the
    browser sends them; `redirect_uri` is what the identity provider is told."""

    kind: Literal["oidc"] = "oidc"
    app_url: str
    callback_path: str
    #: `parseCallbackPathAsRegex`: `callback_path` is a regular expression that the whole
    #: request path must match.
    callback_path_regex: bool = False
    redirect_uri: str
    client_id: str
    #: Empty for a public client (`disableClientSecret`). Dumps redact it; repr hides it.
    client_secret: str = field(default="", repr=False)
    issuer_url: str
    auth_endpoint: str | None = None
    token_endpoint: str | None = None
    jwks_uri: str | None = None
    discovery_poll_interval_ms: int = 1_800_000
    #: What to do with an ID token signed by a key the cached key set lacks (`never`: refuse
    #: it; `always`: fetch the key set again; `limited`: at most `jwks_refresh_limit` times
    #: per poll interval). The key set is fetched again every poll interval anyway.
    jwks_refresh: Literal["never", "always", "limited"] = "never"
    jwks_refresh_limit: int = 0
    #: `discoveryOverride.idTokenAlgs` / `.authMethods`: used instead of the discovered
    #: ones (empty: as discovered).
    id_token_algs: tuple[str, ...] = ()
    auth_methods: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ("openid",)
    auth_endpoint_query_params: tuple[tuple[str, str], ...] = ()
    token_endpoint_query_params: tuple[tuple[str, str], ...] = ()
    session: Session = Session()
    id_token_header: str | None = None
    access_token_header: str | None = None
    #: `Bearer ` before the token when its header is `authorization`.
    bearer_in_authorization: bool = False
    #: `identityToken.claimsToHeaders` / `accessToken.claimsToHeaders` (the access token
    #: when it is a JWT the provider signed).
    identity_token_claims: tuple[ClaimToHeader, ...] = ()
    access_token_claims: tuple[ClaimToHeader, ...] = ()
    #: `dynamicMetadataFromClaims`: ID token claims as Envoy dynamic metadata (key, claim).
    dynamic_metadata_from_claims: tuple[tuple[str, str], ...] = ()
    logout_path: str | None = None
    after_logout_url: str
    #: Where a logout revokes the access token and ends the provider's session (None: as
    #: discovered; discovered None: not done).
    revocation_endpoint: str | None = None
    end_session_endpoint: str | None = None
    end_session_method: Literal["GET", "POST"] = "GET"
    #: `frontChannelLogout.path`: the provider calls it (in an iframe) to end this
    #: browser's session here.
    front_channel_logout_path: str | None = None
    #: `autoMapFromMetadata.namespace`: string values of this dynamic metadata namespace
    #: are added to the authorization and token requests.
    auto_map_namespace: str | None = None
    fail_on_redirect: bool = False
