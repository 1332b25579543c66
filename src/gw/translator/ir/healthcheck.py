"""Health checking: Envoy's active checks of every endpoint, and passive outlier detection
that ejects endpoints whose requests fail."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.headers import HeaderValue


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpHealthCheck:
    path: str
    host: str | None = None
    method: str | None = None
    http2: bool = False
    #: [start, end) status ranges counted as healthy (none: 200 only).
    expected_statuses: tuple[tuple[int, int], ...] = ()
    request_headers_to_add: tuple[HeaderValue, ...] = ()
    request_headers_to_remove: tuple[str, ...] = ()
    service_name_prefix: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpHealthCheck:
    """Hex payloads: `send` is written, every `receive` must come back (in any order)."""

    send: str | None = None
    receive: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GrpcHealthCheck:
    service_name: str | None = None
    authority: str | None = None
    initial_metadata: tuple[HeaderValue, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthCheck:
    """Exactly one of `http`, `tcp` and `grpc`."""

    timeout_ms: int
    interval_ms: int
    healthy_threshold: int
    unhealthy_threshold: int
    http: HttpHealthCheck | None = None
    tcp: TcpHealthCheck | None = None
    grpc: GrpcHealthCheck | None = None
    initial_jitter_ms: int | None = None
    interval_jitter_ms: int | None = None
    interval_jitter_percent: int | None = None
    reuse_connection: bool | None = None
    no_traffic_interval_ms: int | None = None
    unhealthy_interval_ms: int | None = None
    unhealthy_edge_interval_ms: int | None = None
    healthy_edge_interval_ms: int | None = None
    event_log_path: str | None = None
    always_log_health_check_failures: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OutlierDetection:
    """Eject an endpoint after consecutive failures or a poor success rate; None fields
    keep Envoy's defaults."""

    interval_ms: int
    consecutive_5xx: int | None = None
    base_ejection_time_ms: int | None = None
    max_ejection_percent: int | None = None
    enforcing_consecutive_5xx: int | None = None
    enforcing_success_rate: int | None = None
    success_rate_minimum_hosts: int | None = None
    success_rate_request_volume: int | None = None
    success_rate_stdev_factor: int | None = None
    consecutive_gateway_failure: int | None = None
    enforcing_consecutive_gateway_failure: int | None = None
    split_external_local_origin_errors: bool = False
    consecutive_local_origin_failure: int | None = None
    enforcing_consecutive_local_origin_failure: int | None = None
    enforcing_local_origin_success_rate: int | None = None
