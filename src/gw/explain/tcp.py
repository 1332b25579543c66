"""A filter chain that proxies TCP (a TCP gateway's host, a hybrid gateway's TCP part): the
connection goes to the chain's cluster (by weight among several, or the cluster the SNI
names), with no HTTP routing. Without a cluster that is served and has a healthy endpoint,
Envoy closes the connection. A TLS connection on a chain that terminates no TLS is passed
through: the upstream terminates it, which explain cannot see.
"""

from __future__ import annotations

from envoy.config.listener.v3 import listener_components_pb2 as lc_pb2
from envoy.extensions.filters.network.tcp_proxy.v3 import tcp_proxy_pb2

from gw.explain.explanation import Outcome
from gw.explain.listeners import chain_terminates_tls
from gw.explain.outcome import cluster_destination
from gw.explain.request import Request
from gw.explain.served import Served

TCP_PROXY = "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy"
SNI_CLUSTER = "type.googleapis.com/envoy.extensions.filters.network.sni_cluster.v3.SniCluster"
#: Who decides a passed-through TLS connection (the upstream's TLS, explain cannot see it).
PASSTHROUGH = "tcp proxy (TLS passed through)"


def tcp_outcome(chain: lc_pb2.FilterChain, request: Request, served: Served) -> Outcome | None:
    """What the chain's TCP proxy does with the connection; None when it runs none."""
    types = [f.typed_config.type_url for f in chain.filters]
    if TCP_PROXY not in types:
        return None
    proxy = tcp_proxy_pb2.TcpProxy()
    chain.filters[types.index(TCP_PROXY)].typed_config.Unpack(proxy)
    if SNI_CLUSTER in types and request.sni:
        targets = [(request.sni, 1)]
    elif proxy.HasField("weighted_clusters"):
        targets = [(c.name, c.weight) for c in proxy.weighted_clusters.clusters]
    else:
        targets = [(proxy.cluster, 1)]
    total = sum(weight for _, weight in targets) or 1
    destinations = tuple(
        cluster_destination(name, weight, 100 * weight / total, served) for name, weight in targets
    )
    by = PASSTHROUGH if request.tls and not chain_terminates_tls(chain) else "tcp proxy"
    if not any(d.endpoints and not d.note for d in destinations):
        reason = "no cluster with a healthy endpoint: Envoy closes the connection"
        return Outcome(action="close", by=by, destinations=destinations, reason=reason)
    return Outcome(action="forward", by=by, destinations=destinations)
