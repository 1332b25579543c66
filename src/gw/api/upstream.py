"""Upstream (`gw.vendor.io/v1`): where routes send traffic — static hosts, an orchestrator
service, a Unix socket, an AWS Lambda region, an Azure function app or a Google Cloud
service — and how Envoy talks to it.

The options live in their own modules (`loadbalancer`, `healthcheck`, `connection`,
`failover`, `subsets`, `aws`, `azure`, `gcp`, `functions`). Kinds and fields gw cannot
serve with stock Envoy (`awsEc2`, `consul`, `ai`, CONNECT tunnelling, ...) are typed loosely
here so that the translator refuses them by name with the reason, instead of an "unknown
field" that reads like a typo.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from gw.api.aws import AwsUpstreamSpec
from gw.api.azure import AzureUpstreamSpec
from gw.api.connection import CircuitBreakerConfig, ConnectionConfig, PreconnectPolicy
from gw.api.duration import Duration
from gw.api.failover import Failover
from gw.api.functions import ServiceSpec
from gw.api.gcp import GcpUpstreamSpec
from gw.api.headers import HeaderValue
from gw.api.healthcheck import HealthCheck, OutlierDetection
from gw.api.loadbalancer import LoadBalancerConfig
from gw.api.meta import Model, Resource, UInt32
from gw.api.subsets import SubsetSpec
from gw.api.tls import UpstreamSslConfig


class HostHealthCheckConfig(Model):
    path: str = ""
    method: str = ""


class StaticHost(Model):
    addr: str
    port: int
    sni_addr: str | None = None
    load_balancing_weight: int | None = Field(default=None, ge=1, le=2**32 - 1)
    health_check_config: HostHealthCheckConfig | None = None
    #: Endpoint metadata by filter namespace; `envoy.lb` holds the labels subsets match.
    metadata: dict[str, dict[str, Any]] = {}


class StaticSpec(Model):
    hosts: list[StaticHost] = []
    use_tls: bool | None = None
    service_spec: ServiceSpec | None = None
    auto_sni_rewrite: bool | None = None
    #: gw's addition: subsets over the hosts' `metadata.envoy.lb` labels.
    subset_spec: SubsetSpec | None = None


class OrchSpec(Model):
    service_name: str
    service_namespace: str
    service_port: int
    selector: dict[str, str] = {}
    service_spec: ServiceSpec | None = None
    subset_spec: SubsetSpec | None = None


class PipeSpec(Model):
    path: str = ""
    service_spec: ServiceSpec | None = None


class DiscoveryMetadata(Model):
    labels: dict[str, str] = {}


class UpstreamSpec(Model):
    """Exactly one kind: `static`, `orch`, `pipe`, `aws`, `azure` or `gcp` (`awsEc2`,
    `consul` and `ai` are refused with the reason)."""

    static: StaticSpec | None = None
    orch: OrchSpec | None = None
    pipe: PipeSpec | None = None
    aws: AwsUpstreamSpec | None = None
    aws_ec2: dict[str, Any] | None = None
    azure: AzureUpstreamSpec | None = None
    consul: dict[str, Any] | None = None
    gcp: GcpUpstreamSpec | None = None
    ai: dict[str, Any] | None = None
    ssl_config: UpstreamSslConfig | None = None
    discovery_metadata: DiscoveryMetadata | None = None
    circuit_breakers: CircuitBreakerConfig | None = None
    load_balancer_config: LoadBalancerConfig | None = None
    health_checks: list[HealthCheck] = []
    outlier_detection: OutlierDetection | None = None
    failover: Failover | None = None
    connection_config: ConnectionConfig | None = None
    protocol_selection: Literal["USE_CONFIGURED_PROTOCOL", "USE_DOWNSTREAM_PROTOCOL"] = (
        "USE_CONFIGURED_PROTOCOL"
    )
    use_http2: bool | None = None
    initial_stream_window_size: UInt32 | None = None
    initial_connection_window_size: UInt32 | None = None
    max_concurrent_streams: UInt32 | None = None
    override_stream_error_on_invalid_http_message: bool | None = None
    http_proxy_hostname: str | None = None
    http_connect_ssl_config: dict[str, Any] | None = None
    http_connect_headers: list[HeaderValue] = []
    ignore_health_on_host_removal: bool | None = None
    respect_dns_ttl: bool | None = None
    dns_refresh_rate: Duration | None = None
    proxy_protocol_version: str | None = None
    preconnect_policy: PreconnectPolicy | None = None
    disable_istio_auto_mtls: bool | None = None


class Upstream(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "Upstream"
    PLURAL: ClassVar[str] = "upstreams"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("us",)

    spec: UpstreamSpec
