"""Clusters: an Upstream (or a service a route addresses directly), its endpoints and how
Envoy connects to them.

The options of an Upstream each have a dataclass: load balancing and subsets
(`loadbalancer.py`), active and passive health checking (`healthcheck.py`), and here the
connection options, circuit breakers and DNS settings. None (or empty) means Envoy's
default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir.hcm import Http2Options
from gw.translator.ir.healthcheck import HealthCheck, OutlierDetection
from gw.translator.ir.loadbalancer import LoadBalancer, SubsetConfig
from gw.translator.ir.source import SourceRef
from gw.translator.ir.tls import UpstreamTls


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceSelection:
    """The endpoints of an EDS cluster: the ready addresses behind one port of an
    orchestrator service, narrowed to pods carrying every `selector` label when it is set.
    With `labels`, each endpoint carries its pod's labels (for subsets)."""

    namespace: str
    name: str
    port: int
    selector: tuple[tuple[str, str], ...] = ()
    labels: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Locality:
    region: str = ""
    zone: str = ""
    sub_zone: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """An address and port, or a Unix socket path (`pipe`, `port` 0).

    `metadata` is endpoint metadata by filter namespace, each value a JSON object's text;
    the subset load balancer matches the `envoy.lb` one. A failover endpoint has a
    `priority` above 0, and may have a locality (with its weight) and its own health
    check port and host name."""

    address: str
    port: int
    weight: int | None = None
    pipe: bool | None = None
    #: The host's name, for hashing by name and as the Host of its HTTP health checks.
    hostname: str | None = None
    #: The server name sent in the TLS handshake with this host, when hosts differ in it.
    sni: str | None = None
    metadata: tuple[tuple[str, str], ...] | None = None
    priority: int | None = None
    locality: Locality | None = None
    locality_weight: int | None = None
    health_check_port: int | None = None
    health_check_hostname: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CircuitBreakers:
    max_connections: int | None = None
    max_pending_requests: int | None = None
    max_requests: int | None = None
    max_retries: int | None = None
    track_remaining: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpKeepalive:
    probes: int | None = None
    time_s: int | None = None
    interval_s: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Http1Options:
    enable_trailers: bool = False
    header_case: Literal["proper", "preserve"] | None = None
    override_stream_error_on_invalid_http_message: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionOptions:
    """Per-connection limits and the HTTP options of connections to the upstream."""

    max_requests_per_connection: int | None = None
    buffer_limit_bytes: int | None = None
    tcp_keepalive: TcpKeepalive | None = None
    idle_timeout_ms: int | None = None
    max_headers_count: int | None = None
    max_stream_duration_ms: int | None = None
    http1: Http1Options | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DnsOptions:
    """How Envoy re-resolves the host names of a `dns` cluster."""

    respect_ttl: bool = False
    refresh_rate_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Preconnect:
    per_upstream_ratio: float | None = None
    predictive_ratio: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    """An Upstream (or a service addressed directly). `name` is `<upstream>_<namespace>`.

    `discovery`: `static` for IP hosts (and Unix sockets), `dns` for host names (Envoy
    resolves them), `eds` for endpoints pushed by the control plane as they change: those
    of `service`, filled in from the current Endpoints and Pods on every translation.
    `failover` endpoints (priority 1 and up) come after `endpoints` in every case.

    Options added after the first release default to None ("not set", "no") rather than to
    an empty value, so that the dumps of clusters that do not use them stay as they were.
    """

    name: str
    source: SourceRef
    discovery: Literal["static", "dns", "eds"]
    endpoints: tuple[Endpoint, ...]
    connect_timeout_ms: int = 5000
    http2: bool = False
    #: Speak to the upstream the protocol the client spoke (HTTP/1 or HTTP/2).
    use_downstream_protocol: bool | None = None
    http2_options: Http2Options | None = None
    service: ServiceSelection | None = None
    tls: UpstreamTls | None = None
    load_balancer: LoadBalancer | None = None
    subsets: SubsetConfig | None = None
    health_checks: tuple[HealthCheck, ...] | None = None
    outlier_detection: OutlierDetection | None = None
    circuit_breakers: CircuitBreakers | None = None
    connection: ConnectionOptions | None = None
    dns: DnsOptions | None = None
    ignore_health_on_host_removal: bool | None = None
    preconnect: Preconnect | None = None
    failover: tuple[Endpoint, ...] | None = None
    overprovisioning_factor: int | None = None
    #: Send the PROXY protocol header (`V1` or `V2`) on every connection.
    proxy_protocol: Literal["V1", "V2"] | None = None
    #: Requests routed here invoke AWS Lambda functions (the route says which).
    aws_lambda: bool | None = None
    #: Requests routed here carry a Google identity token for this audience, which the
    #: proxy gets from the GCP metadata server (a `gcp` Upstream).
    gcp_audience: str | None = None
