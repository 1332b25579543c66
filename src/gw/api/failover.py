"""`failover` on an Upstream: endpoints Envoy uses when the upstream's own are unhealthy,
in priority order (the first list is priority 1, the next 2, ...)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from gw.api.meta import Model, UInt32
from gw.api.tls import UpstreamSslConfig


class Locality(Model):
    region: str = ""
    zone: str = ""
    sub_zone: str = ""


class HealthCheckConfig(Model):
    port_value: UInt32 = 0
    hostname: str = ""
    path: str = ""
    method: str = ""


class LbEndpoint(Model):
    address: str = ""
    port: UInt32 = 0
    health_check_config: HealthCheckConfig | None = None
    upstream_ssl_config: UpstreamSslConfig | None = None
    load_balancing_weight: int | None = Field(default=None, ge=1, le=2**32 - 1)
    metadata: dict[str, dict[str, Any]] = {}


class LocalityLbEndpoints(Model):
    locality: Locality | None = None
    lb_endpoints: list[LbEndpoint] = []
    load_balancing_weight: int | None = Field(default=None, ge=1, le=2**32 - 1)


class PrioritizedLocality(Model):
    locality_endpoints: list[LocalityLbEndpoints] = []


class FailoverPolicy(Model):
    overprovisioning_factor: int | None = Field(default=None, ge=1, le=2**32 - 1)


class Failover(Model):
    prioritized_localities: list[PrioritizedLocality] = []
    policy: FailoverPolicy | None = None
