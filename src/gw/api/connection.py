"""How Envoy connects to an Upstream's hosts: `connectionConfig` (timeouts, keepalive,
per-connection limits and HTTP options), HTTP/2 settings, `circuitBreakers` and
`preconnectPolicy`."""

from __future__ import annotations

from typing import Literal

from gw.api.duration import Duration
from gw.api.meta import Model, UInt32

#: A protobuf `uint32`: Envoy refuses anything larger.


class TcpKeepAlive(Model):
    keepalive_probes: UInt32 = 0
    keepalive_time: Duration | None = None
    keepalive_interval: Duration | None = None


class HttpProtocolOptions(Model):
    """`commonHttpProtocolOptions`: for HTTP/1 and HTTP/2 connections to the upstream."""

    idle_timeout: Duration | None = None
    max_headers_count: UInt32 = 0
    max_stream_duration: Duration | None = None
    headers_with_underscores_action: Literal["ALLOW", "REJECT_REQUEST", "DROP_HEADER"] = "ALLOW"


class Http1ProtocolOptions(Model):
    enable_trailers: bool = False
    proper_case_header_key_format: bool | None = None
    preserve_case_header_key_format: bool | None = None
    override_stream_error_on_invalid_http_message: bool | None = None


class ConnectionConfig(Model):
    max_requests_per_connection: UInt32 = 0
    connect_timeout: Duration | None = None
    tcp_keepalive: TcpKeepAlive | None = None
    per_connection_buffer_limit_bytes: UInt32 | None = None
    common_http_protocol_options: HttpProtocolOptions | None = None
    http1_protocol_options: Http1ProtocolOptions | None = None


class CircuitBreakerConfig(Model):
    """Limits per upstream cluster; unset ones keep Envoy's defaults (1024, 1024, 1024, 3)."""

    max_connections: UInt32 | None = None
    max_pending_requests: UInt32 | None = None
    max_requests: UInt32 | None = None
    max_retries: UInt32 | None = None
    track_remaining: bool = False


class PreconnectPolicy(Model):
    per_upstream_preconnect_ratio: float | None = None
    predictive_preconnect_ratio: float | None = None
