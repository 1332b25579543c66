"""The traffic options of the IR holders onto Envoy's route messages: what a route does to
a forwarded request (rewrites, stream timeouts, shadowing, upgrades), its tracing and
metadata; a virtual host's attempt counts (`destinations.py` has the weighted
destinations'). The per-filter parts of routes and hosts come from the filters themselves
(`faults`, `csrf`, `buffer`, `extproc` in `filters.py`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from google.protobuf import json_format, struct_pb2

from gw.translator import ir
from gw.translator.envoy.rewrite import add_rewrites
from gw.translator.envoy.routetracing import add_route_tracing
from gw.translator.envoy.shadowing import build_mirror_policy
from gw.translator.envoy.stats import build_virtual_clusters
from gw.translator.envoy.timeouts import add_stream_timeouts
from gw.translator.envoy.upgrades import build_upgrade_configs


def add_route_traffic(out: rc_pb2.Route, route: ir.Route) -> None:
    traffic = route.traffic
    if traffic is None:
        return
    if out.HasField("route"):
        action = out.route
        if traffic.rewrites is not None:
            add_rewrites(action, traffic.rewrites)
        if traffic.timeouts is not None:
            add_stream_timeouts(action, traffic.timeouts)
        if traffic.shadow is not None:
            action.request_mirror_policies.append(build_mirror_policy(traffic.shadow))
        action.upgrade_configs.extend(build_upgrade_configs(traffic.upgrades))
    if traffic.tracing is not None:
        add_route_tracing(out, traffic.tracing)
    for namespace, value in traffic.metadata:
        out.metadata.filter_metadata[namespace].CopyFrom(
            json_format.ParseDict(json.loads(value), struct_pb2.Struct())
        )


def add_host_traffic(out: rc_pb2.VirtualHost, vhost: ir.VirtualHost) -> None:
    traffic = vhost.traffic
    if traffic is None:
        return
    if traffic.request_attempt_count:
        out.include_request_attempt_count = True
    if traffic.attempt_count_in_response:
        out.include_attempt_count_in_response = True
    out.virtual_clusters.extend(build_virtual_clusters(traffic.virtual_clusters))


def used_anywhere(
    vhosts: Sequence[ir.VirtualHost],
    option: Callable[[ir.HostTraffic | ir.RouteTraffic | ir.DestinationTraffic], object],
) -> bool:
    """True when some host, route or weighted destination of `vhosts` sets `option`
    (which reads it from any of the three holders)."""
    for vhost in vhosts:
        if vhost.traffic is not None and option(vhost.traffic) is not None:
            return True
        for r in vhost.routes:
            if r.traffic is not None and option(r.traffic) is not None:
                return True
            if isinstance(r.action, ir.Forward) and any(
                c.traffic is not None and option(c.traffic) is not None for c in r.action.clusters
            ):
                return True
    return False
