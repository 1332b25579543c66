"""The Proxy: what stage 1 (resources) hands to stage 2 (Envoy), as frozen dataclasses.

Every reference is resolved here (a route names a cluster that is in `Proxy.clusters`,
key material sits in `Proxy.secrets`), every default is applied, and nothing imports the
API models or protobuf: a reader can follow a request from listener to cluster without
knowing either. Sequences are tuples; maps are sorted tuples of pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir_ratelimit import RateLimits, RateLimitServer
from gw.wire.extauth import AuthConfig
from gw.wire.ratelimit import RateLimitConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceRef:
    """The resource an element came from: findings and NACKs map back through it."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}.{self.name}"


# --- routes -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderMatch:
    name: str
    value: str = ""  # empty: the header must be present
    regex: bool = False
    invert: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMatch:
    name: str
    value: str = ""
    regex: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteMatch:
    path_kind: Literal["prefix", "exact", "regex"]
    path: str
    case_sensitive: bool = True
    headers: tuple[HeaderMatch, ...] = ()
    query: tuple[QueryMatch, ...] = ()
    methods: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceSelection:
    """The endpoints of an EDS cluster: the ready addresses behind one port of an
    orchestrator service, narrowed to pods carrying every `selector` label when it is set."""

    namespace: str
    name: str
    port: int
    selector: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedCluster:
    cluster: str
    weight: int = 1
    #: Set when the route addresses an orchestrator service directly (`orch` destination):
    #: stage 1 adds the service's cluster next to the route.
    service: ServiceSelection | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Envoy's retry policy; None fields keep Envoy's defaults."""

    retry_on: str = ""
    num_retries: int | None = None
    per_try_timeout_ms: int | None = None
    base_interval_ms: int | None = None
    max_interval_ms: int | None = None
    retriable_status_codes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CorsPolicy:
    """A CORS policy; `disabled` switches CORS handling off (a route's `disableForRoute`)."""

    allow_origins: tuple[str, ...] = ()
    allow_origin_regexes: tuple[str, ...] = ()
    allow_methods: tuple[str, ...] = ()
    allow_headers: tuple[str, ...] = ()
    expose_headers: tuple[str, ...] = ()
    max_age: str | None = None
    allow_credentials: bool | None = None
    disabled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Forward:
    """Send the request to one cluster, or split it across several by weight."""

    clusters: tuple[WeightedCluster, ...]
    prefix_rewrite: str | None = None
    timeout_ms: int | None = None
    host_rewrite: str | None = None
    auto_host_rewrite: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectResponse:
    status: int
    body: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Redirect:
    host: str | None = None
    path: str | None = None
    prefix_rewrite: str | None = None
    response_code: int = 301
    https: bool = False
    strip_query: bool = False
    port: int | None = None


# --- transformations and header manipulation ----------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractorRef:
    """A template part: the value of the named extractor of the same stage."""

    extractor: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeaderRef:
    """A template part: the value of a request header as it is at this stage."""

    header: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Extractor:
    """A value taken from a request header with an RE2 regex (REFERENCE.md §6.2).

    `extract`: the regex must match the whole value; the value is group `subgroup`, or empty
    when the header is missing or the regex does not match. `single_replace`: when the regex
    matches the whole value, the value becomes `replacement` (only group 0 is supported).
    `replace_all`: every match is replaced. Both replace modes leave a non-matching value
    unchanged. `replacement` is literal text and capture-group numbers.
    """

    name: str
    header: str
    regex: str
    subgroup: int = 0
    mode: Literal["extract", "single_replace", "replace_all"] = "extract"
    replacement: tuple[str | int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderTemplate:
    """A header whose value is literal text and references, rendered per request."""

    name: str
    parts: tuple[str | ExtractorRef | RequestHeaderRef, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Transformation:
    """One stage's request transformation, applied in this order: `headers_to_remove`,
    then `headers` (each replaces any header of that name; an empty result leaves none),
    then `headers_to_append`. Extractors read the request as it entered the stage."""

    extractors: tuple[Extractor, ...] = ()
    headers_to_remove: tuple[str, ...] = ()
    headers: tuple[HeaderTemplate, ...] = ()
    headers_to_append: tuple[HeaderTemplate, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedTransformations:
    """`early` runs before authentication, `regular` after it (before the router)."""

    early: Transformation | None = None
    regular: Transformation | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderValue:
    """A header to add. `value` may hold Envoy `%COMMAND%` substitutions (checked in stage 1);
    `append` adds another value when the header exists, else the value replaces it."""

    name: str
    value: str
    append: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderManipulation:
    """Headers added and removed at a virtual host or route, when the request is sent
    upstream (after every filter) and when the response is sent downstream."""

    request_headers_to_add: tuple[HeaderValue, ...] = ()
    request_headers_to_remove: tuple[str, ...] = ()
    response_headers_to_add: tuple[HeaderValue, ...] = ()
    response_headers_to_remove: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtAuth:
    """External auth on a virtual host or route: the AuthConfig the extauth server checks
    requests against (`config_id`, `<namespace>.<name>`), or None to switch it off here."""

    config_id: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    name: str
    match: RouteMatch
    action: Forward | DirectResponse | Redirect
    #: Set: replaces the virtual host's transformations on this route (both stages).
    transformations: StagedTransformations | None = None
    headers: HeaderManipulation | None = None
    #: True: the virtual host's JWT verification is skipped on this route.
    jwt_disabled: bool = False
    #: Replaces the virtual host's RBAC on this route (None: inherit it).
    rbac: Rbac | None = None
    #: None: as the virtual host says.
    extauth: ExtAuth | None = None
    #: Replaces the virtual host's retry policy on this route (None: inherit it).
    retries: RetryPolicy | None = None
    #: Replaces the virtual host's CORS policy on this route (None: inherit it).
    cors: CorsPolicy | None = None
    #: Replaces the virtual host's global and local limits on this route (None: inherit).
    ratelimit: RateLimits | None = None


# --- JWT verification ---------------------------------------------------------------------


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


# --- RBAC ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimMatch:
    """A claim of a verified payload: `path` (a nested claim is several segments) must
    hold `value`, compared as `kind` says."""

    path: tuple[str, ...]
    kind: Literal["exact", "bool", "list_contains", "regex"]
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RbacPrincipal:
    """All `claims` hold in the payload verified by one of `providers` (JwtProvider names)."""

    providers: tuple[str, ...]
    claims: tuple[ClaimMatch, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RbacPolicy:
    """Allows a request whose method is in `methods` (empty: any), whose path starts with
    `path_prefix` (None: any), and that one of `principals` matches."""

    name: str
    methods: tuple[str, ...] = ()
    path_prefix: str | None = None
    principals: tuple[RbacPrincipal, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rbac:
    """A request passes when some policy allows it; no policies deny everything.
    `disabled` (on a route) turns the virtual host's RBAC off there."""

    policies: tuple[RbacPolicy, ...] = ()
    disabled: bool = False


# --- virtual hosts and listeners ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsTermination:
    """How the HTTPS listener terminates TLS for one virtual host (its own filter chain).

    `server_names` are the SNI names that select it (`*.example.com` allowed); empty means
    the default chain, for clients whose SNI matches no other chain or who send none.
    `secret` names the `TlsSecret` in `Proxy.secrets` (served over SDS, so rotating it needs
    no listener change); with `validate_clients` its CA checks client certificates, which
    `require_client_certificate` makes mandatory. Protocol versions are spelled as Envoy
    spells them (`TLSv1_2`).
    """

    server_names: tuple[str, ...]
    secret: str
    validate_clients: bool = False
    require_client_certificate: bool = False
    verify_subject_alt_names: tuple[str, ...] = ()
    alpn_protocols: tuple[str, ...] = ("h2", "http/1.1")
    minimum_version: str | None = None
    maximum_version: str | None = None
    cipher_suites: tuple[str, ...] = ()
    ecdh_curves: tuple[str, ...] = ()
    disable_session_resumption: bool = False
    handshake_timeout_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtAuthServer:
    """Settings `extauth`: the gRPC cluster of the extauth server and how Envoy calls it."""

    cluster: str
    timeout_ms: int = 200
    failure_mode_allow: bool = False
    status_on_error: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class VirtualHost:
    """One VirtualService on one listener. `name` is Envoy-safe: `<namespace>_<name>`.

    `tls` is set for virtual hosts on the HTTPS listener."""

    name: str
    source: SourceRef
    domains: tuple[str, ...]
    routes: tuple[Route, ...]
    transformations: StagedTransformations | None = None
    headers: HeaderManipulation | None = None
    tls: TlsTermination | None = None
    jwt: JwtVerification | None = None
    rbac: Rbac | None = None
    extauth: ExtAuth | None = None
    #: Set (from Settings) when the host or one of its routes uses extauth.
    extauth_server: ExtAuthServer | None = None
    retries: RetryPolicy | None = None
    cors: CorsPolicy | None = None
    ratelimit: RateLimits | None = None
    #: Set (from Settings) when the host or one of its routes has rate limits.
    ratelimit_server: RateLimitServer | None = None

    @property
    def uses_extauth(self) -> bool:
        """True when some request on this host may be sent to the extauth server."""
        return any(
            e is not None and e.config_id is not None
            for e in (self.extauth, *(r.extauth for r in self.routes))
        )

    @property
    def uses_global_ratelimit(self) -> bool:
        """True when some request on this host may be sent to the rate-limit server."""
        return any(
            r is not None and r.has_global
            for r in (self.ratelimit, *(r.ratelimit for r in self.routes))
        )

    @property
    def uses_local_ratelimit(self) -> bool:
        return any(
            r is not None and r.local is not None
            for r in (self.ratelimit, *(r.ratelimit for r in self.routes))
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Listener:
    name: str
    address: str
    port: int
    virtual_hosts: tuple[VirtualHost, ...]
    #: The Gateway resource it comes from; None for the built-in gateways.
    gateway: SourceRef | None = None

    @property
    def route_config_name(self) -> str:
        return f"{self.name}-routes"


# --- clusters -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    address: str
    port: int
    weight: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpstreamTls:
    """TLS from Envoy to an upstream. Key material is named, never copied here: `*_secret`
    is a `TlsSecret` of `Proxy.secrets` (served over SDS), `*_file` a path on the proxy."""

    sni: str | None = None
    #: Present this secret's certificate to the upstream (mutual TLS).
    certificate_secret: str | None = None
    #: Verify the upstream's certificate with this secret's CA.
    ca_secret: str | None = None
    certificate_file: str | None = None
    private_key_file: str | None = None
    ca_file: str | None = None
    verify_subject_alt_names: tuple[str, ...] = ()
    alpn_protocols: tuple[str, ...] = ()
    min_version: str | None = None
    max_version: str | None = None
    cipher_suites: tuple[str, ...] = ()
    ecdh_curves: tuple[str, ...] = ()
    allow_renegotiation: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    """An Upstream (or a service addressed directly). `name` is `<upstream>_<namespace>`.

    `discovery`: `static` for IP hosts, `dns` for host names (Envoy resolves them), `eds`
    for endpoints pushed by the control plane as they change: those of `service`, filled in
    from the current Endpoints and Pods on every translation.
    """

    name: str
    source: SourceRef
    discovery: Literal["static", "dns", "eds"]
    endpoints: tuple[Endpoint, ...]
    connect_timeout_ms: int = 5000
    http2: bool = False
    service: ServiceSelection | None = None
    tls: UpstreamTls | None = None


# --- key material -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsSecret:
    """A checked certificate chain and its private key (PEM), served to Envoy over SDS as
    `name`; `ca` (PEM, optional) validates peers. Dumps redact `private_key`."""

    name: str
    source: SourceRef
    certificate_chain: str
    private_key: str
    ca: str | None = None
    not_after: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Proxy:
    """Everything one proxy (an Envoy fleet sharing a role) is configured with."""

    name: str
    namespace: str
    listeners: tuple[Listener, ...] = ()
    clusters: tuple[Cluster, ...] = ()
    secrets: tuple[TlsSecret, ...] = ()
    #: Served to the extauth server (role `extauth_role`), not to Envoy.
    auth_configs: tuple[AuthConfig, ...] = ()
    #: Served to the rate-limit server (role `ratelimit_role`), not to Envoy.
    rate_limit_configs: tuple[RateLimitConfig, ...] = ()

    @property
    def role(self) -> str:
        """The xDS snapshot key; Envoy announces it in its node metadata."""
        return f"{self.namespace}~{self.name}"

    @property
    def extauth_role(self) -> str:
        """The xDS snapshot key of the extauth servers."""
        return f"{self.namespace}~extauth"

    @property
    def ratelimit_role(self) -> str:
        """The xDS snapshot key of the rate-limit servers."""
        return f"{self.namespace}~ratelimit"
