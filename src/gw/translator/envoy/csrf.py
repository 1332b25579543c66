"""`ir.CsrfPolicy` → Envoy's CSRF filter. The listener's filter enforces nothing (0%); the
policies of virtual hosts, routes and weighted destinations are per-filter configs, the
most specific one applying (the established gateway's translation)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.extensions.filters.http.csrf.v3 import csrf_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.matching import runtime_fraction, string_matcher
from gw.translator.envoy.packing import pack
from gw.translator.envoy.traffic import used_anywhere

_OFF = ir.CsrfPolicy(enforced=ir.Fraction(numerator=0))


def _csrf(traffic: ir.HostTraffic | ir.RouteTraffic | ir.DestinationTraffic) -> object:
    return traffic.csrf


class CsrfFilter:
    name = names.CSRF

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not used_anywhere(vhosts, _csrf):
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(build_csrf_policy(_OFF)))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        policy = vhost.traffic.csrf if vhost.traffic is not None else None
        return None if policy is None else build_csrf_policy(policy)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        policy = route.traffic.csrf if route.traffic is not None else None
        return None if policy is None else build_csrf_policy(policy)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_csrf_policy(policy: ir.CsrfPolicy) -> csrf_pb2.CsrfPolicy:
    out = csrf_pb2.CsrfPolicy(
        filter_enabled=runtime_fraction(policy.enforced),
        additional_origins=[string_matcher(o) for o in policy.additional_origins],
    )
    if policy.shadow is not None:
        out.shadow_enabled.CopyFrom(runtime_fraction(policy.shadow))
    return out
