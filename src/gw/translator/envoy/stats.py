"""`ir.VirtualCluster`s → an Envoy virtual host's virtual clusters."""

from __future__ import annotations

from collections.abc import Iterable

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import regex_pb2, string_pb2

from gw.translator import ir


def build_virtual_clusters(
    clusters: Iterable[ir.VirtualCluster],
) -> list[rc_pb2.VirtualCluster]:
    out = []
    for cluster in clusters:
        headers = [
            rc_pb2.HeaderMatcher(
                name=":path",
                string_match=string_pb2.StringMatcher(
                    safe_regex=regex_pb2.RegexMatcher(regex=cluster.pattern)
                ),
            )
        ]
        if cluster.method is not None:
            headers.append(
                rc_pb2.HeaderMatcher(
                    name=":method", string_match=string_pb2.StringMatcher(exact=cluster.method)
                )
            )
        out.append(rc_pb2.VirtualCluster(name=cluster.name, headers=headers))
    return out
