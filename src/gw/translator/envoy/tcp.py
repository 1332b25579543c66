"""`ir.TcpListener` → filter chains of Envoy's TCP proxy, one per TCP host.

Each chain: the connection limit and the token bucket of connections (both per chain, as an
HTTP gateway's connection limit is), `sni_cluster` when the host forwards to the cluster
its SNI names, then `tcp_proxy` to the host's cluster(s). A chain with SNI names matches
them (the listener then inspects the TLS ClientHello); a host that terminates TLS gets the
downstream TLS context over SDS, exactly as a TLS virtual host does (`envoy/tls.py`); a
passed-through host gets none, so the upstream sees the client's own TLS.
"""

from __future__ import annotations

from envoy.config.core.v3 import base_pb2
from envoy.config.listener.v3 import listener_components_pb2 as lc_pb2
from envoy.extensions.filters.network.connection_limit.v3 import connection_limit_pb2
from envoy.extensions.filters.network.local_ratelimit.v3 import local_rate_limit_pb2
from envoy.extensions.filters.network.sni_cluster.v3 import sni_cluster_pb2
from envoy.extensions.filters.network.tcp_proxy.v3 import tcp_proxy_pb2
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names, tls
from gw.translator.envoy.headers import header_option
from gw.translator.envoy.packing import duration, pack
from gw.translator.envoy.ratelimit import token_bucket


def tcp_filter_chains(stat_prefix: str, tcp: ir.TcpListener) -> list[lc_pb2.FilterChain]:
    """One chain per host, in host order."""
    prefix = stat_prefix.replace(":", "_")
    return [_chain(prefix, tcp, host) for host in tcp.hosts]


def _chain(prefix: str, tcp: ir.TcpListener, host: ir.TcpHost) -> lc_pb2.FilterChain:
    filters = []
    if tcp.connection_limit is not None:
        filters.append(connection_limit(prefix, tcp.connection_limit))
    if tcp.local_ratelimit is not None:
        filters.append(_local_ratelimit(prefix, tcp.local_ratelimit))
    if host.forward_sni:
        filters.append(
            lc_pb2.Filter(name=names.SNI_CLUSTER, typed_config=pack(sni_cluster_pb2.SniCluster()))
        )
    filters.append(
        lc_pb2.Filter(name=names.TCP_PROXY, typed_config=pack(_proxy(prefix, tcp.settings, host)))
    )
    chain = lc_pb2.FilterChain(name=host.name, filters=filters)
    if host.server_names:
        chain.filter_chain_match.server_names.extend(host.server_names)
    if host.tls is not None:
        chain.transport_socket.CopyFrom(
            base_pb2.TransportSocket(
                name=names.TLS_TRANSPORT_SOCKET,
                typed_config=pack(tls.downstream_tls_context(host.tls)),
            )
        )
        if host.tls.handshake_timeout_ms is not None:
            chain.transport_socket_connect_timeout.CopyFrom(duration(host.tls.handshake_timeout_ms))
    return chain


def _proxy(prefix: str, settings: ir.TcpProxySettings, host: ir.TcpHost) -> tcp_proxy_pb2.TcpProxy:
    out = tcp_proxy_pb2.TcpProxy(stat_prefix=prefix)
    if len(host.clusters) == 1 and not host.forward_sni:
        out.cluster = host.clusters[0].cluster
    elif host.clusters and not host.forward_sni:
        out.weighted_clusters.clusters.extend(
            tcp_proxy_pb2.TcpProxy.WeightedCluster.ClusterWeight(name=c.cluster, weight=c.weight)
            for c in host.clusters
        )
    else:
        # Without an SNI naming a cluster (or with a destination that does not exist):
        # a cluster that never exists, so the connection is closed.
        out.cluster = names.TCP_DESTINATION_MISSING
    if settings.max_connect_attempts is not None:
        out.max_connect_attempts.CopyFrom(
            wrappers_pb2.UInt32Value(value=settings.max_connect_attempts)
        )
    if settings.idle_timeout_ms is not None:
        out.idle_timeout.CopyFrom(duration(settings.idle_timeout_ms))
    if settings.access_log_flush_interval_ms is not None:
        out.access_log_options.access_log_flush_interval.CopyFrom(
            duration(settings.access_log_flush_interval_ms)
        )
    if settings.tunnel is not None:
        out.tunneling_config.hostname = settings.tunnel.hostname
        out.tunneling_config.headers_to_add.extend(
            header_option(h) for h in settings.tunnel.headers
        )
    return out


def connection_limit(prefix: str, limit: ir.ConnectionLimit) -> lc_pb2.Filter:
    """At most `limit.max_connections` connections in the chain."""
    config = connection_limit_pb2.ConnectionLimit(
        stat_prefix=prefix, max_connections=wrappers_pb2.UInt64Value(value=limit.max_connections)
    )
    if limit.delay_ms is not None:
        config.delay.CopyFrom(duration(limit.delay_ms))
    return lc_pb2.Filter(name=names.CONNECTION_LIMIT, typed_config=pack(config))


def _local_ratelimit(prefix: str, limit: ir.LocalLimit) -> lc_pb2.Filter:
    config = local_rate_limit_pb2.LocalRateLimit(
        stat_prefix=prefix, token_bucket=token_bucket(limit)
    )
    return lc_pb2.Filter(name=names.NETWORK_LOCAL_RATELIMIT, typed_config=pack(config))
