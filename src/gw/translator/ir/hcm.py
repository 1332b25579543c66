"""How a listener speaks HTTP: the settings of its HTTP connection manager (a Gateway's
`httpConnectionManagerSettings`), with gw's defaults applied.

Every field holds the value to serve: stage 1 fills in gw's defaults (the hardening ones
below) for what the Gateway leaves unset. `None` means "Envoy's own default" and is not
written to the Envoy config. Durations are milliseconds; 0 switches a timeout off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir.headers import HeaderValue

HeadersWithUnderscoresAction = Literal["ALLOW", "REJECT_REQUEST", "DROP_HEADER"]
ServerHeaderTransformation = Literal["OVERWRITE", "APPEND_IF_ABSENT", "PASS_THROUGH"]
PathWithEscapedSlashesAction = Literal[
    "IMPLEMENTATION_SPECIFIC_DEFAULT",
    "KEEP_UNCHANGED",
    "REJECT_REQUEST",
    "UNESCAPE_AND_REDIRECT",
    "UNESCAPE_AND_FORWARD",
]
ForwardClientCertDetails = Literal[
    "SANITIZE", "FORWARD_ONLY", "APPEND_FORWARD", "SANITIZE_SET", "ALWAYS_FORWARD_ONLY"
]
CodecType = Literal["AUTO", "HTTP1", "HTTP2"]
#: Protocols a client may upgrade a connection to (`Upgrade:` / `CONNECT`).
UpgradeType = Literal["websocket", "CONNECT"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TracingTag:
    """A tag on every span: a request header's value, an environment variable, a literal,
    or a metadata value (`kind` REQUEST or ENDPOINT, `name` the namespace, `key` the path
    split on `delimiter`)."""

    tag: str
    source: Literal["request_header", "environment", "literal", "metadata"]
    name: str
    default: str = ""
    kind: Literal["REQUEST", "ENDPOINT"] = "REQUEST"
    key: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Tracing:
    """Spans of every request, sent to a collector reached through `collector_cluster`:
    Zipkin over HTTP (`zipkin_endpoint`, JSON or protobuf) or OpenTelemetry over gRPC."""

    provider: Literal["zipkin", "opentelemetry"]
    collector_cluster: str
    zipkin_endpoint: str = ""
    zipkin_version: Literal["HTTP_JSON", "HTTP_PROTO"] = "HTTP_JSON"
    trace_id_128bit: bool = False
    shared_span_context: bool | None = None
    service_name: str = ""
    authority: str = ""
    max_cache_size: int | None = None
    verbose: bool = False
    #: Percentages (0–100) of requests traced: forced by the client, at random, overall.
    client_sampling: float | None = None
    random_sampling: float | None = None
    overall_sampling: float | None = None
    tags: tuple[TracingTag, ...] = ()
    spawn_upstream_span: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Http2Options:
    max_concurrent_streams: int | None = None
    initial_stream_window_size: int | None = None
    initial_connection_window_size: int | None = None
    override_stream_error_on_invalid_http_message: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpSettings:
    """The HTTP connection manager of a listener. Defaults are gw's: the peer's address is
    the client's (`use_remote_address`), headers must arrive within 10 s, a stream or a
    connection silent for 60 s is closed, paths are normalised before routing, and header
    names with underscores are dropped."""

    use_remote_address: bool = True
    xff_num_trusted_hops: int = 0
    skip_xff_append: bool = False
    append_x_forwarded_port: bool = False
    #: (address prefix, prefix length) of peers whose requests count as internal.
    internal_cidr_ranges: tuple[tuple[str, int], ...] = ()
    internal_unix_sockets: bool = False
    via: str = ""
    generate_request_id: bool | None = None
    preserve_external_request_id: bool = False
    pack_trace_reason: bool | None = None
    use_request_id_for_trace_sampling: bool | None = None
    server_name: str = ""
    server_header_transformation: ServerHeaderTransformation = "OVERWRITE"
    proxy_100_continue: bool = False
    codec_type: CodecType = "AUTO"
    request_headers_timeout_ms: int | None = 10_000
    stream_idle_timeout_ms: int | None = 60_000
    idle_timeout_ms: int | None = 60_000
    request_timeout_ms: int | None = None
    drain_timeout_ms: int | None = None
    delayed_close_timeout_ms: int | None = None
    max_connection_duration_ms: int | None = None
    max_stream_duration_ms: int | None = None
    max_request_headers_kb: int | None = None
    max_headers_count: int | None = None
    max_requests_per_connection: int | None = None
    headers_with_underscores_action: HeadersWithUnderscoresAction = "DROP_HEADER"
    normalize_path: bool = True
    merge_slashes: bool = True
    path_with_escaped_slashes_action: PathWithEscapedSlashesAction = "UNESCAPE_AND_REDIRECT"
    strip_any_host_port: bool = False
    accept_http_10: bool = False
    default_host_for_http_10: str = ""
    allow_chunked_length: bool = False
    enable_trailers: bool = False
    header_key_format: Literal["proper_case", "preserve_case"] | None = None
    forward_client_cert_details: ForwardClientCertDetails | None = None
    #: Which parts of the client certificate `x-forwarded-client-cert` carries.
    client_cert_details: tuple[Literal["subject", "cert", "chain", "dns", "uri"], ...] = ()
    upgrades: tuple[UpgradeType, ...] = ("websocket",)
    http2: Http2Options | None = None
    #: Applied as a request arrives, before routing and every filter.
    early_headers_to_add: tuple[HeaderValue, ...] = ()
    early_headers_to_remove: tuple[str, ...] = ()
    tracing: Tracing | None = None
    #: HTTP/1 requests may use methods beyond the standard ones (`headerValidationSettings`).
    allow_custom_methods: bool = False
    #: The client is the leftmost address of `X-Forwarded-For` (`leftmostXffAddress`).
    leftmost_xff: bool = False
