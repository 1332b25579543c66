"""`failover` (Upstream) → failover endpoints of `ir.Cluster`: the first prioritized list is
priority 1, the next 2, and so on; the upstream's own endpoints are priority 0. Envoy sends
traffic to a priority only when the ones before it are not healthy enough, which it knows
from `healthChecks` or `outlierDetection` (a warning says so when neither is set).

Endpoints take an IP or a host name (a host name makes the cluster resolve names), a port,
a weight, metadata, and a health check port and host name. Their own TLS
(`upstreamSslConfig`) and a health check path or method are refused: the cluster's TLS and
health checks apply to every endpoint.
"""

from __future__ import annotations

from dataclasses import replace

from gw.api.failover import Failover, LbEndpoint, LocalityLbEndpoints
from gw.translator import ir
from gw.translator.gateway.hosts import checked_address, endpoint_metadata
from gw.translator.reports import ResourceReport


def build_failover(
    failover: Failover | None, field: str, report: ResourceReport, *, checked: bool
) -> tuple[tuple[ir.Endpoint, ...], int | None]:
    """The failover endpoints and the overprovisioning factor. `checked`: the upstream has
    active or passive health checking."""
    if failover is None:
        return (), None
    if not checked:
        report.warning(
            field,
            "failover takes effect only when Envoy finds endpoints unhealthy: add healthChecks "
            "or outlierDetection",
        )
    out: list[ir.Endpoint] = []
    for p, prioritized in enumerate(failover.prioritized_localities):
        for g, group in enumerate(prioritized.locality_endpoints):
            where = f"{field}.prioritizedLocalities[{p}].localityEndpoints[{g}]"
            out.extend(_locality(group, p + 1, where, report))
    factor = failover.policy.overprovisioning_factor if failover.policy else None
    return tuple(out), factor


def _locality(
    group: LocalityLbEndpoints, priority: int, field: str, report: ResourceReport
) -> list[ir.Endpoint]:
    locality = None
    if group.locality is not None:
        where = group.locality
        locality = ir.Locality(region=where.region, zone=where.zone, sub_zone=where.sub_zone)
    out = []
    for i, endpoint in enumerate(group.lb_endpoints):
        built = _endpoint(endpoint, f"{field}.lbEndpoints[{i}]", report)
        if built is not None:
            out.append(
                replace(
                    built,
                    priority=priority,
                    locality=locality,
                    locality_weight=group.load_balancing_weight,
                )
            )
    return out


def _endpoint(endpoint: LbEndpoint, field: str, report: ResourceReport) -> ir.Endpoint | None:
    if endpoint.upstream_ssl_config is not None:
        report.error(
            f"{field}.upstreamSslConfig",
            "per-endpoint TLS is not supported in gw: failover endpoints use the upstream's "
            "sslConfig",
        )
    check = endpoint.health_check_config
    if check is not None and (check.path or check.method):
        report.error(
            f"{field}.healthCheckConfig",
            "a health check path or method per endpoint is not supported in gw: it needs the "
            "enterprise advanced HTTP health checker; the upstream's healthChecks apply to "
            "every endpoint",
        )
    address = checked_address(endpoint.address, endpoint.port, field, report, name="address")
    if address is None:
        return None
    return ir.Endpoint(
        address=address,
        port=endpoint.port,
        weight=endpoint.load_balancing_weight,
        metadata=endpoint_metadata(endpoint.metadata),
        health_check_port=(check.port_value or None) if check else None,
        health_check_hostname=(check.hostname or None) if check else None,
    )
