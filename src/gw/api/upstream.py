"""Upstream (`gw.vendor.io/v1`): where routes send traffic — static hosts or an
orchestrator service."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model, Resource
from gw.api.tls import UpstreamSslConfig


class StaticHost(Model):
    addr: str
    port: int
    sni_addr: str | None = None
    load_balancing_weight: int | None = Field(default=None, ge=1)


class StaticSpec(Model):
    hosts: list[StaticHost] = []
    use_tls: bool | None = None
    auto_sni_rewrite: bool | None = None


class OrchSpec(Model):
    service_name: str
    service_namespace: str
    service_port: int
    selector: dict[str, str] = {}


class DiscoveryMetadata(Model):
    labels: dict[str, str] = {}


class ConnectionConfig(Model):
    max_requests_per_connection: int | None = None
    connect_timeout: Duration | None = None
    per_connection_buffer_limit_bytes: int | None = None


class UpstreamSpec(Model):
    """Exactly one of `static` and `orch`."""

    static: StaticSpec | None = None
    orch: OrchSpec | None = None
    ssl_config: UpstreamSslConfig | None = None
    discovery_metadata: DiscoveryMetadata | None = None
    connection_config: ConnectionConfig | None = None
    use_http2: bool | None = None


class Upstream(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "Upstream"
    PLURAL: ClassVar[str] = "upstreams"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("us",)

    spec: UpstreamSpec
