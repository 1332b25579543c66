"""External auth in the IR: which AuthConfig (or custom auth server) guards a virtual host or
route, and how Envoy calls the auth servers. The AuthConfigs themselves are the gw extauth
server's contract (`gw.wire.extauth`), carried by `Proxy.auth_configs`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gw.wire.extauth_pass import SessionPass


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomAuth:
    """`customAuth`: a request goes to the Settings' auth server (`name` None) or to one of
    `namedExtauth`, with these context extensions; gw does not configure that server."""

    name: str | None = None
    context_extensions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtAuth:
    """External auth on a virtual host or route: the AuthConfig the extauth server checks
    requests against (`config_id`, `<namespace>.<name>`), or a custom server (`custom`);
    neither switches it off here."""

    config_id: str | None
    custom: CustomAuth | None = None
    #: A route of an OIDC login's own requests (`callback`, `logout`, `frontchannel`):
    #: they always reach the extauth server, session pass or not.
    flow: str | None = None

    @property
    def active(self) -> bool:
        return self.config_id is not None or self.custom is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpAuthService:
    """`httpService`: the server is asked over HTTP (the request's method and path, under
    `path_prefix`), 2xx allowing; which headers go to it and come back."""

    path_prefix: str = ""
    headers_to_add: tuple[tuple[str, str], ...] = ()
    allowed_upstream_headers: tuple[str, ...] = ()
    allowed_upstream_headers_to_append: tuple[str, ...] = ()
    allowed_client_headers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthService:
    """Where one auth server is and how it is spoken to (gRPC unless `http`)."""

    cluster: str
    timeout_ms: int = 200
    http: HttpAuthService | None = None
    authority: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpChecks:
    """gw's extauth server answers these AuthConfigs (`config_ids`) over plain HTTP too, at
    `cluster` (HTTP/1.1): their steps need only the request. Envoy copies the answer's
    `upstream_headers` onto the request (replacing) and adds `appended_headers`."""

    cluster: str
    config_ids: tuple[str, ...]
    upstream_headers: tuple[str, ...] = ()
    appended_headers: tuple[str, ...] = ()
    #: Session passes (`gateway/extauth_pass.py`) by config id; None: none.
    passes: tuple[tuple[str, SessionPass], ...] | None = None

    def session_pass(self, config_id: str | None) -> SessionPass | None:
        return dict(self.passes or ()).get(config_id or "")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtAuthServer:
    """Settings `extauth` (the Envoy filter's settings and its default server) and
    `namedExtauth` (servers that `customAuth.name` picks per host or route). `cluster` is
    the default server's (None when the Settings name only named ones)."""

    cluster: str | None
    timeout_ms: int = 200
    failure_mode_allow: bool = False
    status_on_error: int | None = None
    http: HttpAuthService | None = None
    authority: str | None = None
    #: `requestBody`: the request body goes along, up to this many bytes (None: no body).
    max_request_bytes: int | None = None
    allow_partial_message: bool = False
    pack_as_bytes: bool = False
    clear_route_cache: bool = False
    stat_prefix: str | None = None
    #: The request headers the servers read (None: all of them; fewer headers make each
    #: check cheaper to encode, send and parse), and the dynamic metadata namespaces.
    request_headers: tuple[str, ...] | None = ("cookie",)
    #: ...and those matching these regular expressions (`allowedHeadersRegex`).
    request_header_patterns: tuple[str, ...] = ()
    metadata_namespaces: tuple[str, ...] = ()
    named: tuple[tuple[str, AuthService], ...] = ()
    #: The default server's HTTP checks (`gateway/extauth_http.py`), if it has them.
    http_checks: HttpChecks | None = None

    def over_http(self, extauth: ExtAuth | None) -> bool:
        """True when the checks of `extauth` go over HTTP (then the gRPC filter only runs
        when the HTTP answer leaves the decision to it)."""
        checks = self.http_checks
        return (
            checks is not None
            and extauth is not None
            and extauth.custom is None
            and extauth.config_id in checks.config_ids
        )

    @property
    def default(self) -> AuthService | None:
        if self.cluster is None:
            return None
        return AuthService(
            cluster=self.cluster,
            timeout_ms=self.timeout_ms,
            http=self.http,
            authority=self.authority,
        )
