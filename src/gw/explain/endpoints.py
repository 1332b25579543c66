"""Which of a cluster's endpoints Envoy's load balancer picks from, by Envoy's rules.

- An endpoint the served assignment marks unhealthy, draining or timed out is not picked.
- Priorities: the lowest priority with an endpoint left takes the traffic; the later ones
  are failover, used as the health of those before drops. Active health checks and outlier
  ejection are not visible in the configuration, so explain takes every endpoint as healthy
  unless the assignment says otherwise, and lists the failover endpoints apart.
- Locality weighting (`common_lb_config.locality_weighted_lb_config`): a locality's weight is
  its `load_balancing_weight` (0 when unset; endpoints sharing a locality share it). While
  some locality of the priority has a weight, the others are never picked. When none has:
  the hashing balancers (`RING_HASH`, `MAGLEV`) build their table from weighted localities
  only, so it is empty and the router answers 503 `no healthy upstream` (verified against
  Envoy 1.40); round robin, least request and random pick among all the priority's endpoints.
- DNS clusters (`STRICT_DNS`, `LOGICAL_DNS`) hold host names Envoy resolves: what they
  resolve to, and whether they answer, is not in the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import health_check_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2

NO_HEALTHY_UPSTREAM = "no healthy upstream"
#: What explain cannot know about a DNS cluster, and what Envoy answers when it fails.
DNS_NOTE = (
    "host names Envoy resolves by DNS: whether they resolve and answer is not in the "
    f"configuration (none resolves: 503 {NO_HEALTHY_UPSTREAM}; none answers: 503 upstream "
    "connect error)"
)
_UNHEALTHY = frozenset(
    {health_check_pb2.UNHEALTHY, health_check_pb2.DRAINING, health_check_pb2.TIMEOUT}
)
_HASHING = {cluster_pb2.Cluster.RING_HASH: "ring_hash", cluster_pb2.Cluster.MAGLEV: "maglev"}
_DNS = frozenset({cluster_pb2.Cluster.STRICT_DNS, cluster_pb2.Cluster.LOGICAL_DNS})


@dataclass(frozen=True, slots=True)
class Pick:
    """The endpoints the balancer picks from, the failover ones, and why none can be
    picked (empty when some can)."""

    endpoints: tuple[str, ...]
    failover: tuple[str, ...]
    empty_because: str
    resolved_by_dns: bool


def pick(
    cluster: cluster_pb2.Cluster, assignment: endpoint_pb2.ClusterLoadAssignment | None
) -> Pick:
    dns = cluster.type in _DNS
    priorities: dict[int, list[endpoint_components_pb2.LocalityLbEndpoints]] = {}
    for group in assignment.endpoints if assignment else ():
        if any(lb.health_status not in _UNHEALTHY for lb in group.lb_endpoints):
            priorities.setdefault(group.priority, []).append(group)
    if not priorities:
        return Pick((), (), "no healthy endpoint", dns)
    first, *later = sorted(priorities)
    failover = tuple(e for p in later for g in priorities[p] for e in _healthy(g))
    groups = priorities[first]
    if not cluster.common_lb_config.HasField("locality_weighted_lb_config"):
        return Pick(tuple(e for g in groups for e in _healthy(g)), failover, "", dns)
    weights: dict[bytes, int] = {}
    for group in groups:
        key = group.locality.SerializeToString(deterministic=True)
        if group.HasField("load_balancing_weight") or key not in weights:
            weights[key] = group.load_balancing_weight.value
    weighted = [g for g in groups if weights[g.locality.SerializeToString(deterministic=True)]]
    if weighted:
        return Pick(tuple(e for g in weighted for e in _healthy(g)), failover, "", dns)
    policy = _HASHING.get(cluster.lb_policy)
    if policy is None:
        return Pick(tuple(e for g in groups for e in _healthy(g)), failover, "", dns)
    unweighted = ", ".join(e for g in groups for e in _healthy(g))
    why = (
        f"{policy} with locality weighting places only endpoints of localities that have a "
        f"load balancing weight; priority {first}'s ({unweighted}) have none, so its table is empty"
    )
    return Pick((), failover, why, dns)


def _healthy(group: endpoint_components_pb2.LocalityLbEndpoints) -> list[str]:
    return [_endpoint(lb) for lb in group.lb_endpoints if lb.health_status not in _UNHEALTHY]


def _endpoint(lb: endpoint_components_pb2.LbEndpoint) -> str:
    if lb.endpoint.address.HasField("pipe"):
        return str(lb.endpoint.address.pipe.path)
    address = lb.endpoint.address.socket_address
    host = f"[{address.address}]" if ":" in address.address else address.address
    return f"{host}:{address.port_value}"
