"""IR load balancing → the load-balancing fields of an Envoy cluster (policy, its settings,
the common ones, subsets) and a route's hash policies."""

from __future__ import annotations

import json
from typing import Any

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import base_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.v3 import percent_pb2
from google.protobuf import struct_pb2

from gw.translator import ir
from gw.translator.envoy.durations import duration_ms

_POLICY = {
    "round_robin": cluster_pb2.Cluster.ROUND_ROBIN,
    "least_request": cluster_pb2.Cluster.LEAST_REQUEST,
    "random": cluster_pb2.Cluster.RANDOM,
    "ring_hash": cluster_pb2.Cluster.RING_HASH,
    "maglev": cluster_pb2.Cluster.MAGLEV,
}
#: The endpoint metadata namespace the subset load balancer matches.
LB_METADATA = "envoy.lb"


def add_load_balancer(out: cluster_pb2.Cluster, balancer: ir.LoadBalancer | None) -> None:
    if balancer is None:
        return
    out.lb_policy = _POLICY[balancer.policy]
    slow_start = _slow_start(balancer.slow_start)
    if balancer.policy == "round_robin" and slow_start is not None:
        out.round_robin_lb_config.slow_start_config.CopyFrom(slow_start)
    elif balancer.policy == "least_request":
        config = out.least_request_lb_config
        if balancer.choice_count is not None:
            config.choice_count.value = balancer.choice_count
        if slow_start is not None:
            config.slow_start_config.CopyFrom(slow_start)
    elif balancer.policy == "ring_hash":
        if balancer.minimum_ring_size is not None:
            out.ring_hash_lb_config.minimum_ring_size.value = balancer.minimum_ring_size
        if balancer.maximum_ring_size is not None:
            out.ring_hash_lb_config.maximum_ring_size.value = balancer.maximum_ring_size
    common = out.common_lb_config
    if balancer.healthy_panic_threshold is not None:
        common.healthy_panic_threshold.CopyFrom(
            percent_pb2.Percent(value=balancer.healthy_panic_threshold)
        )
    if balancer.update_merge_window_ms is not None:
        common.update_merge_window.CopyFrom(duration_ms(balancer.update_merge_window_ms))
    if balancer.locality_weighted:
        common.locality_weighted_lb_config.SetInParent()
    if balancer.use_hostname_for_hashing:
        common.consistent_hashing_lb_config.use_hostname_for_hashing = True
    if balancer.close_connections_on_host_set_change:
        common.close_connections_on_host_set_change = True


def _slow_start(slow: ir.SlowStart | None) -> cluster_pb2.Cluster.SlowStartConfig | None:
    if slow is None:
        return None
    out = cluster_pb2.Cluster.SlowStartConfig()
    if slow.window_ms is not None:
        out.slow_start_window.CopyFrom(duration_ms(slow.window_ms))
    if slow.aggression is not None:
        out.aggression.CopyFrom(
            base_pb2.RuntimeDouble(default_value=slow.aggression, runtime_key="")
        )
    if slow.min_weight_percent is not None:
        out.min_weight_percent.CopyFrom(percent_pb2.Percent(value=slow.min_weight_percent))
    return out


def add_subsets(out: cluster_pb2.Cluster, subsets: ir.SubsetConfig | None) -> None:
    if subsets is None:
        return
    config = out.lb_subset_config
    config.fallback_policy = cluster_pb2.Cluster.LbSubsetConfig.LbSubsetFallbackPolicy.Value(
        subsets.fallback
    )
    if subsets.default_subset:
        config.default_subset.CopyFrom(_struct(dict(subsets.default_subset)))
    for selector in subsets.selectors:
        config.subset_selectors.append(
            cluster_pb2.Cluster.LbSubsetConfig.LbSubsetSelector(
                keys=list(selector.keys), single_host_per_subset=selector.single_host_per_subset
            )
        )


def endpoint_metadata(entries: tuple[tuple[str, str], ...] | None) -> base_pb2.Metadata | None:
    if not entries:
        return None
    out = base_pb2.Metadata()
    for namespace, text in entries:
        out.filter_metadata[namespace].CopyFrom(_struct(json.loads(text)))
    return out


def subset_match(labels: tuple[tuple[str, str], ...] | None) -> base_pb2.Metadata | None:
    """A route's `metadata_match`: the labels the chosen endpoint must carry."""
    if not labels:
        return None
    out = base_pb2.Metadata()
    out.filter_metadata[LB_METADATA].CopyFrom(_struct(dict(labels)))
    return out


def hash_policy(policy: ir.HashPolicy) -> rc_pb2.RouteAction.HashPolicy:
    out = rc_pb2.RouteAction.HashPolicy(terminal=policy.terminal)
    if policy.header is not None:
        out.header.header_name = policy.header
    elif policy.cookie is not None:
        out.cookie.name = policy.cookie
        if policy.cookie_ttl_ms is not None:
            out.cookie.ttl.CopyFrom(duration_ms(policy.cookie_ttl_ms))
        if policy.cookie_path is not None:
            out.cookie.path = policy.cookie_path
    else:
        out.connection_properties.source_ip = True
    return out


def _struct(values: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(values)
    return out
