"""Routes forwarded by the dynamic forward proxy → Envoy's `dynamic_forward_proxy` filter
on the listeners that have one (its per-route config says which host to use), and the
cluster they all go to, sharing one DNS cache with Envoy's defaults except the lookup
family (IPv4 first, as gw's other DNS clusters)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.cluster.v3 import cluster_pb2
from envoy.extensions.clusters.dynamic_forward_proxy.v3 import cluster_pb2 as dfp_cluster_pb2
from envoy.extensions.common.dynamic_forward_proxy.v3 import dns_cache_pb2
from envoy.extensions.filters.http.dynamic_forward_proxy.v3 import (
    dynamic_forward_proxy_pb2 as dfp_pb2,
)
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.matching import milliseconds
from gw.translator.envoy.packing import pack

_CLUSTER_TYPE = "envoy.clusters.dynamic_forward_proxy"


def _target(route: ir.Route) -> ir.DynamicForwardProxy | None:
    action = route.action
    return action.dynamic_forward_proxy if isinstance(action, ir.Forward) else None


def dns_cache() -> dns_cache_pb2.DnsCacheConfig:
    return dns_cache_pb2.DnsCacheConfig(
        name=names.DYNAMIC_FORWARD_PROXY_DNS_CACHE,
        dns_lookup_family=cluster_pb2.Cluster.V4_PREFERRED,
    )


class DynamicForwardProxyFilter:
    name = names.DYNAMIC_FORWARD_PROXY

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not any(_target(r) is not None for v in vhosts for r in v.routes):
            return None
        config = dfp_pb2.FilterConfig(dns_cache_config=dns_cache())
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        target = _target(route)
        if target is None or (target.host_rewrite is None and target.host_header is None):
            return None
        config: Message = (
            dfp_pb2.PerRouteConfig(host_rewrite_literal=target.host_rewrite)
            if target.host_rewrite is not None
            else dfp_pb2.PerRouteConfig(host_rewrite_header=target.host_header)
        )
        return config

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        used = any(
            _target(r) is not None
            for listener in proxy.listeners
            for v in listener.virtual_hosts
            for r in v.routes
        )
        if not used:
            return ()
        cluster = cluster_pb2.Cluster(
            name=names.DYNAMIC_FORWARD_PROXY_CLUSTER,
            connect_timeout=milliseconds(5000),
            lb_policy=cluster_pb2.Cluster.CLUSTER_PROVIDED,
        )
        cluster.cluster_type.name = _CLUSTER_TYPE
        cluster.cluster_type.typed_config.CopyFrom(
            pack(dfp_cluster_pb2.ClusterConfig(dns_cache_config=dns_cache()))
        )
        return ((names.CLUSTER, names.DYNAMIC_FORWARD_PROXY_CLUSTER, cluster),)
