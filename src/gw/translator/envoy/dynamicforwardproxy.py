"""Routes forwarded by the dynamic forward proxy → Envoy's `dynamic_forward_proxy` filter
on the listeners that have one (its per-route config says which host to use), and the
clusters they go to.

Envoy needs the filter and the cluster a request goes to to share one DNS cache, named and
configured alike. Listeners without settings of their own (a Gateway's
`httpGateway.options.dynamicForwardProxy`) share `gw~dynamic-forward-proxy`, a cache with
Envoy's defaults except the lookup family (IPv4 first, as gw's other DNS clusters). A
listener with settings gets a cache and a cluster named after them
(`gw~dynamic-forward-proxy~<digest>`: listeners with the same settings share them), and
its route configurations send its dynamically forwarded routes there (`retarget`); the
filter is then on its chain whether or not a route uses it, as in the established gateway.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, base_pb2, extension_pb2, protocol_pb2, resolver_pb2
from envoy.config.route.v3 import route_pb2
from envoy.extensions.clusters.dynamic_forward_proxy.v3 import cluster_pb2 as dfp_cluster_pb2
from envoy.extensions.common.dynamic_forward_proxy.v3 import dns_cache_pb2
from envoy.extensions.filters.http.dynamic_forward_proxy.v3 import (
    dynamic_forward_proxy_pb2 as dfp_pb2,
)
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.network.dns_resolver.cares.v3 import cares_dns_resolver_pb2
from envoy.extensions.upstreams.http.v3 import http_protocol_options_pb2 as http_options_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.circuitbreakers import add_circuit_breakers
from gw.translator.envoy.clusters import build_upstream_tls
from gw.translator.envoy.connection import HTTP_OPTIONS
from gw.translator.envoy.matching import milliseconds
from gw.translator.envoy.packing import pack

_CLUSTER_TYPE = "envoy.clusters.dynamic_forward_proxy"
_CARES = "envoy.network.dns_resolver.cares"
_DEFAULT = ir.DnsCache()


def _target(route: ir.Route) -> ir.DynamicForwardProxy | None:
    action = route.action
    return action.dynamic_forward_proxy if isinstance(action, ir.Forward) else None


def _forwards(vhosts: Iterable[ir.VirtualHost]) -> bool:
    return any(_target(r) is not None for v in vhosts for r in v.routes)


def cluster_name(own: ir.DynamicForwardProxyListener | None) -> str:
    """The cluster (and DNS cache) of a listener's dynamically forwarded routes."""
    if own is None:
        return names.DYNAMIC_FORWARD_PROXY_CLUSTER
    digest = hashlib.sha256(repr(own).encode()).hexdigest()[:12]
    return f"{names.DYNAMIC_FORWARD_PROXY_CLUSTER}~{digest}"


def dns_cache(own: ir.DynamicForwardProxyListener | None = None) -> dns_cache_pb2.DnsCacheConfig:
    cache = own.dns_cache if own is not None else _DEFAULT
    out = dns_cache_pb2.DnsCacheConfig(
        name=names.DYNAMIC_FORWARD_PROXY_DNS_CACHE if own is None else cluster_name(own),
        dns_lookup_family=cluster_pb2.Cluster.DnsLookupFamily.Value(cache.lookup_family),
        preresolve_hostnames=[
            address_pb2.SocketAddress(address=host, port_value=port)
            for host, port in cache.preresolve
        ],
    )
    for ms, target in (
        (cache.refresh_rate_ms, out.dns_refresh_rate),
        (cache.host_ttl_ms, out.host_ttl),
        (cache.query_timeout_ms, out.dns_query_timeout),
        (cache.failure_refresh_base_ms, out.dns_failure_refresh_rate.base_interval),
        (cache.failure_refresh_max_ms, out.dns_failure_refresh_rate.max_interval),
    ):
        if ms is not None:
            target.CopyFrom(milliseconds(ms))
    if cache.max_hosts is not None:
        out.max_hosts.value = cache.max_hosts
    if cache.max_pending_lookups is not None:
        out.dns_cache_circuit_breaker.max_pending_requests.value = cache.max_pending_lookups
    if cache.resolvers or cache.use_tcp or cache.no_default_search_domain:
        out.typed_dns_resolver_config.CopyFrom(_cares(cache))
    return out


def _cares(cache: ir.DnsCache) -> extension_pb2.TypedExtensionConfig:
    config = cares_dns_resolver_pb2.CaresDnsResolverConfig(
        resolvers=[
            address_pb2.Address(
                socket_address=address_pb2.SocketAddress(address=host, port_value=port)
            )
            for host, port in cache.resolvers
        ],
        dns_resolver_options=resolver_pb2.DnsResolverOptions(
            use_tcp_for_dns_lookups=cache.use_tcp,
            no_default_search_domain=cache.no_default_search_domain,
        ),
    )
    return extension_pb2.TypedExtensionConfig(name=_CARES, typed_config=pack(config))


class DynamicForwardProxyFilter:
    name = names.DYNAMIC_FORWARD_PROXY

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not _forwards(vhosts):
            return None
        config = dfp_pb2.FilterConfig(dns_cache_config=dns_cache())
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        own = listener.plugins.dynamic_forward_proxy
        if own is None:
            return self.listener_filter(vhosts)
        config = dfp_pb2.FilterConfig(
            dns_cache_config=dns_cache(own), save_upstream_address=own.save_upstream_address
        )
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
        """None from here: which listeners forward dynamically is counted per listener by
        the builder (`hostfacts.py`), which adds `dns_cache_clusters` for them."""
        return ()


def dns_cache_clusters(
    owns: Iterable[ir.DynamicForwardProxyListener | None],
) -> tuple[tuple[str, str, Message], ...]:
    """One cluster per DNS cache: the shared one (None) and each listener's own settings,
    given once for each listener that forwards dynamically."""
    used: dict[str, ir.DynamicForwardProxyListener | None] = {}
    for own in owns:
        used.setdefault(cluster_name(own), own)
    return tuple((names.CLUSTER, name, _cluster(name, used[name])) for name in sorted(used))


def _cluster(name: str, own: ir.DynamicForwardProxyListener | None) -> cluster_pb2.Cluster:
    out = cluster_pb2.Cluster(
        name=name,
        connect_timeout=milliseconds(5000),
        lb_policy=cluster_pb2.Cluster.CLUSTER_PROVIDED,
    )
    out.cluster_type.name = _CLUSTER_TYPE
    out.cluster_type.typed_config.CopyFrom(
        pack(dfp_cluster_pb2.ClusterConfig(dns_cache_config=dns_cache(own)))
    )
    if own is not None:
        add_circuit_breakers(out, own.circuit_breakers)
    if own is not None and own.tls is not None:
        _add_tls(out, own.tls)
    return out


def _add_tls(out: cluster_pb2.Cluster, tls: ir.UpstreamTls) -> None:
    """TLS to the proxied hosts. Without an `sni` of its own, each connection's SNI is the
    host it was made for, and with a CA the certificate must also name that host (Envoy
    asks both of a dynamic forward proxy cluster that sets either; without a CA nothing is
    verified, as for an Upstream, which Envoy calls insecure)."""
    out.transport_socket.CopyFrom(
        base_pb2.TransportSocket(
            name=names.TLS_TRANSPORT_SOCKET, typed_config=pack(build_upstream_tls(tls))
        )
    )
    if tls.sni is not None:
        return
    verified = bool(tls.ca_secret or tls.ca_file)
    options = http_options_pb2.HttpProtocolOptions(
        upstream_http_protocol_options=protocol_pb2.UpstreamHttpProtocolOptions(
            auto_sni=True, auto_san_validation=verified
        )
    )
    options.explicit_http_config.http_protocol_options.SetInParent()
    out.typed_extension_protocol_options[HTTP_OPTIONS].CopyFrom(pack(options))
    if not verified:
        config = dfp_cluster_pb2.ClusterConfig()
        out.cluster_type.typed_config.Unpack(config)
        config.allow_insecure_cluster_options = True
        out.cluster_type.typed_config.CopyFrom(pack(config))


def retargets(listener: ir.Listener) -> bool:
    """Whether `retarget` may change the routes of `listener` (it has forward proxy
    settings of its own); when not, the messages built need no copy of the listener's."""
    return listener.plugins.dynamic_forward_proxy is not None


def retarget(
    configs: list[route_pb2.RouteConfiguration], listener: ir.Listener
) -> list[route_pb2.RouteConfiguration]:
    """A listener with its own settings sends its dynamically forwarded routes to its own
    cluster (the routes are built once, for the shared one; `configs` are the listener's
    own copies)."""
    own = listener.plugins.dynamic_forward_proxy
    if own is None or not _forwards(listener.virtual_hosts):
        return configs
    name = cluster_name(own)
    for config in configs:
        for vhost in config.virtual_hosts:
            for route in vhost.routes:
                if route.route.cluster == names.DYNAMIC_FORWARD_PROXY_CLUSTER:
                    route.route.cluster = name
    return configs


def sanitized_cluster_headers(listener: ir.Listener) -> tuple[str, ...]:
    """`sanitizeClusterHeader`: the headers the listener's routes take their cluster from
    (`clusterHeader`), removed from client requests before anything reads them, so that
    only a filter (a transformation, an external processor) can pick the cluster."""
    if not listener.plugins.sanitize_cluster_header:
        return ()
    return tuple(
        sorted(
            {
                r.action.cluster_header
                for v in listener.virtual_hosts
                for r in v.routes
                if isinstance(r.action, ir.Forward) and r.action.cluster_header is not None
            }
        )
    )
