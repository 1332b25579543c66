"""A weighted destination's traffic options (`ir.DestinationTraffic`) onto its Envoy
`ClusterWeight`: its headers, and its CSRF and buffer configs, which replace the route's for
requests sent to it."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.buffer import build_buffer_per_route
from gw.translator.envoy.csrf import build_csrf_policy
from gw.translator.envoy.headers import add_header_manipulation
from gw.translator.envoy.packing import pack


def add_destination_traffic(
    out: rc_pb2.WeightedCluster.ClusterWeight, target: ir.WeightedCluster
) -> None:
    traffic = target.traffic
    if traffic is None:
        return
    add_header_manipulation(out, traffic.headers)
    if traffic.csrf is not None:
        out.typed_per_filter_config[names.CSRF].CopyFrom(pack(build_csrf_policy(traffic.csrf)))
    if traffic.buffer is not None:
        out.typed_per_filter_config[names.BUFFER].CopyFrom(
            pack(build_buffer_per_route(traffic.buffer))
        )
