"""Which endpoints Envoy's load balancer picks from, as `gw.explain.endpoints` works it out
(the hashing balancers' empty table under locality weighting, round robin's fallback to all
endpoints, and priorities are also checked against a real Envoy by tests/e2e/test_explain.py
over the golden cases upstream-lb-ring-hash and upstream-lb-invalid-locality-weighting)."""

from __future__ import annotations

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, base_pb2, health_check_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2 as ec_pb2
from envoy.config.endpoint.v3 import endpoint_pb2

from gw.explain.endpoints import pick

Cluster = cluster_pb2.Cluster


def group(
    *addresses: str,
    priority: int = 0,
    zone: str | None = None,
    weight: int | None = None,
    unhealthy: tuple[str, ...] = (),
) -> ec_pb2.LocalityLbEndpoints:
    out = ec_pb2.LocalityLbEndpoints(priority=priority)
    for address in addresses:
        host, port = address.rsplit(":", 1)
        lb = out.lb_endpoints.add()
        lb.endpoint.address.CopyFrom(
            address_pb2.Address(
                socket_address=address_pb2.SocketAddress(address=host, port_value=int(port))
            )
        )
        if address in unhealthy:
            lb.health_status = health_check_pb2.UNHEALTHY
    if zone is not None:
        out.locality.CopyFrom(base_pb2.Locality(region="r", zone=zone))
    if weight is not None:
        out.load_balancing_weight.value = weight
    return out


def cluster(
    policy: cluster_pb2.Cluster.LbPolicy.ValueType = Cluster.ROUND_ROBIN,
    locality_weighted: bool = False,
    kind: cluster_pb2.Cluster.DiscoveryType.ValueType = Cluster.STATIC,
) -> cluster_pb2.Cluster:
    out = Cluster(name="c", lb_policy=policy, type=kind)
    if locality_weighted:
        out.common_lb_config.locality_weighted_lb_config.SetInParent()
    return out


def assignment(*groups: ec_pb2.LocalityLbEndpoints) -> endpoint_pb2.ClusterLoadAssignment:
    return endpoint_pb2.ClusterLoadAssignment(cluster_name="c", endpoints=list(groups))


def test_first_priority_takes_the_traffic_later_ones_are_failover() -> None:
    picked = pick(
        cluster(),
        assignment(group("10.0.0.1:80", "10.0.0.2:80"), group("10.1.0.1:80", priority=1)),
    )
    assert picked.endpoints == ("10.0.0.1:80", "10.0.0.2:80")
    assert picked.failover == ("10.1.0.1:80",)
    assert picked.empty_because == ""


def test_endpoints_marked_unhealthy_are_not_picked_and_an_empty_priority_is_skipped() -> None:
    picked = pick(
        cluster(),
        assignment(
            group("10.0.0.1:80", unhealthy=("10.0.0.1:80",)),
            group("10.1.0.1:80", "10.1.0.2:80", priority=1, unhealthy=("10.1.0.2:80",)),
        ),
    )
    assert picked.endpoints == ("10.1.0.1:80",)
    assert pick(cluster(), None).empty_because == "no healthy endpoint"


def test_hashing_with_locality_weighting_and_no_weight_has_an_empty_table() -> None:
    for policy, name in ((Cluster.RING_HASH, "ring_hash"), (Cluster.MAGLEV, "maglev")):
        picked = pick(
            cluster(policy, locality_weighted=True),
            assignment(
                group("10.0.0.1:80", "10.0.0.2:80"),
                group("10.1.0.1:80", priority=1, zone="b", weight=2),
            ),
        )
        # Priority 0 takes the traffic; the weighted failover locality does not help.
        assert picked.endpoints == ()
        assert picked.failover == ("10.1.0.1:80",)
        assert picked.empty_because.startswith(f"{name} with locality weighting")
        assert "priority 0's (10.0.0.1:80, 10.0.0.2:80) have none" in picked.empty_because


def test_hashing_without_locality_weighting_uses_every_endpoint() -> None:
    picked = pick(cluster(Cluster.RING_HASH), assignment(group("10.0.0.1:80")))
    assert picked.endpoints == ("10.0.0.1:80",)


def test_other_policies_fall_back_to_every_endpoint_when_no_locality_has_a_weight() -> None:
    for policy in (Cluster.ROUND_ROBIN, Cluster.LEAST_REQUEST, Cluster.RANDOM):
        picked = pick(cluster(policy, locality_weighted=True), assignment(group("10.0.0.1:80")))
        assert picked.endpoints == ("10.0.0.1:80",)
        assert picked.empty_because == ""


def test_a_locality_without_weight_is_never_picked_beside_one_with_weight() -> None:
    for policy in (Cluster.ROUND_ROBIN, Cluster.RING_HASH):
        picked = pick(
            cluster(policy, locality_weighted=True),
            assignment(
                group("10.0.0.1:80", zone="a", weight=1),
                group("10.0.0.2:80", zone="b"),
                # The same locality again: it shares the weight of zone a.
                group("10.0.0.3:80", zone="a"),
            ),
        )
        assert picked.endpoints == ("10.0.0.1:80", "10.0.0.3:80")


def test_dns_clusters_say_their_names_are_resolved_by_envoy() -> None:
    for kind in (Cluster.STRICT_DNS, Cluster.LOGICAL_DNS):
        picked = pick(cluster(kind=kind), assignment(group("lambda.us-east-1.amazonaws.com:443")))
        assert picked.endpoints == ("lambda.us-east-1.amazonaws.com:443",)
        assert picked.resolved_by_dns
    assert not pick(cluster(), assignment(group("10.0.0.1:80"))).resolved_by_dns


def test_ipv6_and_unix_socket_endpoints_are_written_as_envoy_reaches_them() -> None:
    unix = ec_pb2.LocalityLbEndpoints()
    unix.lb_endpoints.add().endpoint.address.pipe.path = "/run/app.sock"
    picked = pick(cluster(), assignment(group("::1:8080"), unix))
    assert picked.endpoints == ("[::1]:8080", "/run/app.sock")
