"""A Gateway's `spec.httpGateway.options` (the established `HttpListenerOptions`): what the
listener's HTTP connection manager does besides routing.

Typed and built: `httpConnectionManagerSettings` (`api/hcm.py`), `connectionLimit`,
`healthCheck`, `grpcWeb`, `gzip`, `httpLocalRatelimit`, `networkLocalRatelimit`,
`statefulSession`, `router`, `headerValidationSettings`, `leftmostXffAddress`,
`grpcJsonTranscoder`,
and `extauth` / `ratelimitServer` (this listener's servers, over the Settings'). The
other established fields are parsed as plain data, so that a manifest using them loads and
gets a status naming them (`NOT_BUILT`, each with the reason), while a misspelt field stays
an unknown field.
"""

from __future__ import annotations

from typing import Any, Literal

from gw.api.duration import Duration
from gw.api.hcm import HttpConnectionManagerSettings
from gw.api.listener_options import ConnectionLimit
from gw.api.meta import Model, ResourceRef, UInt32
from gw.api.ratelimit import RateLimitServerSettings
from gw.api.settings import ExtAuthSettings

#: Established fields gw does not build: manifest name → why (the status says it).
NOT_BUILT = {
    "extensions": "gw has no extension plugins",
    "waf": (
        "a web application firewall needs the ModSecurity filter, which stock Envoy does not have"
    ),
    "dlp": (
        "data loss prevention needs the established gateway's own DLP filter, not in stock Envoy"
    ),
    "wasm": (
        "WebAssembly filters from images need an image fetcher and the established gateway's "
        "wasm filter settings, which gw does not have"
    ),
    "proxyLatency": (
        "the proxy latency filter is the established gateway's own, not in stock Envoy"
    ),
    "tap": (
        "the tap filter's sinks are the established gateway's tap servers, which gw does not have"
    ),
    "sanitizeClusterHeader": (
        "gw's routes do not pick their cluster from a request header (routeAction.clusterHeader "
        "is not built yet), so there is no header to sanitize"
    ),
    "caching": (
        "stock Envoy's cache filter (1.40) sends cache misses to the upstream through an "
        "internal client, so the upstream sees them as internal requests (x-envoy-internal: "
        "true, 192.0.2.2 appended to X-Forwarded-For) and the route's response headers are "
        "lost; caching needs the established gateway's caching server and its filter"
    ),
    "buffer": "the listener-wide request buffer is not built yet",
    "csrf": "the listener-wide CSRF policy is not built yet",
    "dynamicForwardProxy": "the dynamic forward proxy is not built yet",
    "disableExtProcEarly": "ext_proc at listener level is not built",
    "extProcEarly": "ext_proc at listener level is not built",
    "disableExtProc": "ext_proc at listener level is not built",
    "extProc": "ext_proc at listener level is not built",
    "disableExtProcLate": "ext_proc at listener level is not built",
    "extProcLate": "ext_proc at listener level is not built",
}


class GrpcWeb(Model):
    """gRPC-Web is translated to gRPC on every listener unless `disable: true`."""

    disable: bool = False


class HealthCheck(Model):
    path: str = ""


class Gzip(Model):
    memory_level: UInt32 | None = None
    content_length: UInt32 | None = None
    compression_level: Literal["DEFAULT", "BEST", "SPEED"] | None = None
    compression_strategy: Literal["DEFAULT", "FILTERED", "HUFFMAN", "RLE"] | None = None
    content_type: list[str] = []
    disable_on_etag_header: bool = False
    remove_accept_encoding_header: bool = False
    window_bits: UInt32 | None = None


class TokenBucket(Model):
    """A token bucket: `maxTokens` requests (or connections) at once, `tokensPerFill` more
    every `fillInterval` (defaults: 1 and 1s)."""

    max_tokens: UInt32 = 0
    tokens_per_fill: UInt32 | None = None
    fill_interval: Duration | None = None


class LocalRatelimitSettings(Model):
    default_limit: TokenBucket | None = None
    local_rate_limit_per_downstream_connection: bool | None = None
    enable_x_ratelimit_headers: bool | None = None


class Router(Model):
    suppress_envoy_headers: bool | None = None
    dynamic_stats: bool | None = None


class Cookie(Model):
    name: str = ""
    path: str = ""
    ttl: Duration | None = None


class CookieBasedSessionState(Model):
    cookie: Cookie | None = None


class HeaderBasedSessionState(Model):
    header_name: str = ""


class StatefulSession(Model):
    """Exactly one of `cookieBased` and `headerBased`."""

    cookie_based: CookieBasedSessionState | None = None
    header_based: HeaderBasedSessionState | None = None
    strict: bool = False


class Empty(Model):
    pass


class HeaderValidationSettings(Model):
    disable_http1_method_validation: Empty | None = None


class PrintOptions(Model):
    add_whitespace: bool = False
    always_print_primitive_fields: bool = False
    always_print_enums_as_ints: bool = False
    preserve_proto_field_names: bool = False


class DescriptorConfigMap(Model):
    config_map_ref: ResourceRef | None = None
    key: str = ""


class GrpcJsonTranscoder(Model):
    """JSON clients of gRPC services: exactly one descriptor set (`protoDescriptorBin`,
    base64 as the orchestrator writes bytes; `protoDescriptor`, a file on the proxy;
    `protoDescriptorConfigMap`), and the `services` of it to transcode."""

    proto_descriptor: str | None = None
    proto_descriptor_bin: str | None = None
    proto_descriptor_config_map: DescriptorConfigMap | None = None
    services: list[str] = []
    print_options: PrintOptions | None = None
    match_incoming_request_route: bool = False
    ignored_query_parameters: list[str] = []
    auto_mapping: bool = False
    ignore_unknown_query_parameters: bool = False
    convert_grpc_status: bool = False


class HttpListenerOptions(Model):
    http_connection_manager_settings: HttpConnectionManagerSettings | None = None
    connection_limit: ConnectionLimit | None = None
    grpc_web: GrpcWeb | None = None
    health_check: HealthCheck | None = None
    gzip: Gzip | None = None
    http_local_ratelimit: LocalRatelimitSettings | None = None
    network_local_ratelimit: TokenBucket | None = None
    router: Router | None = None
    stateful_session: StatefulSession | None = None
    header_validation_settings: HeaderValidationSettings | None = None
    leftmost_xff_address: bool | None = None
    extauth: ExtAuthSettings | None = None
    ratelimit_server: RateLimitServerSettings | None = None
    grpc_json_transcoder: GrpcJsonTranscoder | None = None
    # Parsed so that an established manifest loads; refused by name (`NOT_BUILT`).
    extensions: Any = None
    caching: Any = None
    waf: Any = None
    dlp: Any = None
    wasm: Any = None
    disable_ext_proc_early: Any = None
    ext_proc_early: Any = None
    disable_ext_proc: Any = None
    ext_proc: Any = None
    disable_ext_proc_late: Any = None
    ext_proc_late: Any = None
    proxy_latency: Any = None
    buffer: Any = None
    csrf: Any = None
    sanitize_cluster_header: Any = None
    dynamic_forward_proxy: Any = None
    tap: Any = None
