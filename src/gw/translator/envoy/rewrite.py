"""`ir.Rewrites` → the path and host rewrites of an Envoy RouteAction; and the endpoint
names `autoHostRewrite` needs on static clusters: Envoy rewrites the Host to the chosen
endpoint's hostname, which a static cluster's endpoints only have when given one (their
address, as the established gateway gives them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import regex_pb2
from google.protobuf.message import Message

from gw.translator import ir


def regex_substitution(rewrite: ir.RegexRewrite) -> regex_pb2.RegexMatchAndSubstitute:
    return regex_pb2.RegexMatchAndSubstitute(
        pattern=regex_pb2.RegexMatcher(regex=rewrite.regex), substitution=rewrite.substitution
    )


def add_rewrites(action: rc_pb2.RouteAction, rewrites: ir.Rewrites) -> None:
    if rewrites.path_regex is not None:
        action.regex_rewrite.CopyFrom(regex_substitution(rewrites.path_regex))
    if rewrites.host_header is not None:
        action.host_rewrite_header = rewrites.host_header
    elif rewrites.host_path_regex is not None:
        action.host_rewrite_path_regex.CopyFrom(regex_substitution(rewrites.host_path_regex))
    if rewrites.append_x_forwarded_host:
        action.append_x_forwarded_host = True


def name_static_endpoints(clusters: Mapping[str, Message], names: Iterable[str]) -> None:
    """Give the endpoints of the named static clusters their address as hostname."""
    for name in names:
        cluster = clusters.get(name)
        if not isinstance(cluster, cluster_pb2.Cluster) or cluster.type != cluster.STATIC:
            continue
        for locality in cluster.load_assignment.endpoints:
            for lb_endpoint in locality.lb_endpoints:
                endpoint = lb_endpoint.endpoint
                if not endpoint.hostname and endpoint.address.HasField("socket_address"):
                    endpoint.hostname = endpoint.address.socket_address.address
