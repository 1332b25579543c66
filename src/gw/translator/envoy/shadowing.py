"""`ir.Shadow` → a request mirror policy on the Envoy RouteAction."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.translator import ir
from gw.translator.envoy.matching import runtime_fraction


def build_mirror_policy(shadow: ir.Shadow) -> rc_pb2.RouteAction.RequestMirrorPolicy:
    out = rc_pb2.RouteAction.RequestMirrorPolicy(
        cluster=shadow.cluster,
        runtime_fraction=runtime_fraction(shadow.share),
        disable_shadow_host_suffix_append=shadow.keep_host,
    )
    if shadow.host is not None:
        out.host_rewrite_literal = shadow.host
    return out
