"""`httpConnectionManagerSettings` (a Gateway's `spec.httpGateway.options`): how the
listener speaks HTTP — client addresses, request ids, timeouts, limits, path handling,
tracing. Field names, types and enum values are the established gateway's; unset fields
keep gw's defaults (docs/gateways.md).
"""

from __future__ import annotations

from typing import Literal

from gw.api.duration import Duration
from gw.api.headers import HeaderValueOption
from gw.api.meta import Model, UInt32
from gw.api.tracing import ListenerTracingSettings
from gw.api.upgrades import ProtocolUpgradeConfig

#: A protobuf `UInt32Value`.


class UuidRequestIdConfigSettings(Model):
    pack_trace_reason: bool | None = None
    use_request_id_for_trace_sampling: bool | None = None


class CidrRange(Model):
    address_prefix: str
    prefix_len: UInt32 | None = None


class InternalAddressConfig(Model):
    """Peers whose requests count as internal (Envoy then keeps their `x-envoy-*` headers)."""

    unix_sockets: bool | None = None
    cidr_ranges: list[CidrRange] = []


class Http2ProtocolOptions(Model):
    max_concurrent_streams: UInt32 | None = None
    initial_stream_window_size: UInt32 | None = None
    initial_connection_window_size: UInt32 | None = None
    override_stream_error_on_invalid_http_message: bool | None = None


class EarlyHeaderManipulation(Model):
    """Headers added and removed as a request arrives, before routing and every filter."""

    headers_to_add: list[HeaderValueOption] = []
    headers_to_remove: list[str] = []


class SetCurrentClientCertDetails(Model):
    subject: bool | None = None
    cert: bool | None = None
    chain: bool | None = None
    dns: bool | None = None
    uri: bool | None = None


class HttpConnectionManagerSettings(Model):
    skip_xff_append: bool | None = None
    via: str | None = None
    xff_num_trusted_hops: UInt32 | None = None
    use_remote_address: bool | None = None
    generate_request_id: bool | None = None
    proxy_100_continue: bool | None = None
    stream_idle_timeout: Duration | None = None
    idle_timeout: Duration | None = None
    max_request_headers_kb: UInt32 | None = None
    request_timeout: Duration | None = None
    request_headers_timeout: Duration | None = None
    drain_timeout: Duration | None = None
    delayed_close_timeout: Duration | None = None
    server_name: str | None = None
    strip_any_host_port: bool | None = None
    accept_http_10: bool | None = None
    default_host_for_http_10: str | None = None
    allow_chunked_length: bool | None = None
    enable_trailers: bool | None = None
    proper_case_header_key_format: bool | None = None
    preserve_case_header_key_format: bool | None = None
    tracing: ListenerTracingSettings | None = None
    forward_client_cert_details: (
        Literal["SANITIZE", "FORWARD_ONLY", "APPEND_FORWARD", "SANITIZE_SET", "ALWAYS_FORWARD_ONLY"]
        | None
    ) = None
    set_current_client_cert_details: SetCurrentClientCertDetails | None = None
    preserve_external_request_id: bool | None = None
    upgrades: list[ProtocolUpgradeConfig] | None = None
    max_connection_duration: Duration | None = None
    max_stream_duration: Duration | None = None
    max_headers_count: UInt32 | None = None
    headers_with_underscores_action: (
        Literal["ALLOW", "REJECT_CLIENT_REQUEST", "DROP_HEADER"] | None
    ) = None
    max_requests_per_connection: UInt32 | None = None
    server_header_transformation: (
        Literal["OVERWRITE", "APPEND_IF_ABSENT", "PASS_THROUGH"] | None
    ) = None
    path_with_escaped_slashes_action: (
        Literal[
            "IMPLEMENTATION_SPECIFIC_DEFAULT",
            "KEEP_UNCHANGED",
            "REJECT_REQUEST",
            "UNESCAPE_AND_REDIRECT",
            "UNESCAPE_AND_FORWARD",
        ]
        | None
    ) = None
    codec_type: Literal["AUTO", "HTTP1", "HTTP2"] | None = None
    merge_slashes: bool | None = None
    normalize_path: bool | None = None
    uuid_request_id_config: UuidRequestIdConfigSettings | None = None
    http2_protocol_options: Http2ProtocolOptions | None = None
    internal_address_config: InternalAddressConfig | None = None
    append_x_forwarded_port: bool | None = None
    early_header_manipulation: EarlyHeaderManipulation | None = None
