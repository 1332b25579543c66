"""`healthChecks` on an Upstream: Envoy's active health checks (HTTP, TCP, gRPC), with the
established gateway's field names."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from gw.api.duration import Duration
from gw.api.headers import HeaderValueOption
from gw.api.meta import Model, UInt32

#: A share in percent, 0 to 100.
Percent = Annotated[int, Field(ge=0, le=100)]

RequestMethod = Literal[
    "METHOD_UNSPECIFIED",
    "GET",
    "HEAD",
    "POST",
    "PUT",
    "DELETE",
    "CONNECT",
    "OPTIONS",
    "TRACE",
    "PATCH",
]


class Payload(Model):
    """Bytes to send or expect, written in hex (`"000000FF"`), as Envoy takes them."""

    text: str


class Int64Range(Model):
    """[start, end): `{start: 200, end: 300}` is every 2xx status."""

    start: int = 0
    end: int = 0


class HttpHealthCheck(Model):
    host: str = ""
    path: str = ""
    service_name: str = ""
    request_headers_to_add: list[HeaderValueOption] = []
    request_headers_to_remove: list[str] = []
    use_http2: bool = False
    expected_statuses: list[Int64Range] = []
    response_assertions: dict[str, Any] | None = None
    method: RequestMethod | None = None


class TcpHealthCheck(Model):
    send: Payload | None = None
    receive: list[Payload] = []


class GrpcHealthCheck(Model):
    service_name: str = ""
    authority: str = ""
    initial_metadata: list[HeaderValueOption] = []


class CustomHealthCheck(Model):
    name: str = ""
    config: dict[str, Any] | None = None
    typed_config: dict[str, Any] | None = None


class HealthCheck(Model):
    """`timeout`, `interval`, `healthyThreshold` and `unhealthyThreshold` are required, and
    exactly one checker (`httpHealthCheck`, `tcpHealthCheck`, `grpcHealthCheck`)."""

    timeout: Duration | None = None
    interval: Duration | None = None
    initial_jitter: Duration | None = None
    interval_jitter: Duration | None = None
    interval_jitter_percent: UInt32 = 0
    unhealthy_threshold: UInt32 | None = None
    healthy_threshold: UInt32 | None = None
    reuse_connection: bool | None = None
    http_health_check: HttpHealthCheck | None = None
    tcp_health_check: TcpHealthCheck | None = None
    grpc_health_check: GrpcHealthCheck | None = None
    custom_health_check: CustomHealthCheck | None = None
    no_traffic_interval: Duration | None = None
    unhealthy_interval: Duration | None = None
    unhealthy_edge_interval: Duration | None = None
    healthy_edge_interval: Duration | None = None
    event_log_path: str = ""
    always_log_health_check_failures: bool = False


class OutlierDetection(Model):
    """Passive health checking: hosts that fail are ejected for a while."""

    consecutive_5xx: UInt32 | None = Field(default=None, alias="consecutive5xx")
    interval: Duration | None = None
    base_ejection_time: Duration | None = None
    max_ejection_percent: Percent | None = None
    enforcing_consecutive_5xx: Percent | None = Field(default=None, alias="enforcingConsecutive5xx")
    enforcing_success_rate: Percent | None = None
    success_rate_minimum_hosts: UInt32 | None = None
    success_rate_request_volume: UInt32 | None = None
    success_rate_stdev_factor: UInt32 | None = None
    consecutive_gateway_failure: UInt32 | None = None
    enforcing_consecutive_gateway_failure: Percent | None = None
    split_external_local_origin_errors: bool = False
    consecutive_local_origin_failure: UInt32 | None = None
    enforcing_consecutive_local_origin_failure: Percent | None = None
    enforcing_local_origin_success_rate: Percent | None = None
