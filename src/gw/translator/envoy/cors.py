"""`ir.CorsPolicy` → Envoy's `cors` filter and its per-virtual-host / per-route policies.

The listener filter carries no policy; a virtual host's policy applies to its routes unless
a route has its own (Envoy reads the most specific `typed_per_filter_config`: the
established gateway's `DEFAULT` merge, route replaces host). A disabled route policy turns
the filter off there (`filter_enabled` 0%). The `cors` fields of Envoy's RouteAction and
VirtualHost are deprecated in 1.40, hence the per-filter config.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.cors.v3 import cors_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from envoy.type.v3 import percent_pb2
from google.protobuf import wrappers_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack


class CorsFilter:
    name = names.CORS

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        used = any(v.cors is not None or any(r.cors is not None for r in v.routes) for v in vhosts)
        if not used:
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(cors_pb2.Cors()))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None if vhost.cors is None else build_policy(vhost.cors)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        return None if route.cors is None else build_policy(route.cors)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_policy(policy: ir.CorsPolicy) -> cors_pb2.CorsPolicy:
    if policy.disabled:
        return cors_pb2.CorsPolicy(
            filter_enabled=base_pb2.RuntimeFractionalPercent(
                default_value=percent_pb2.FractionalPercent(numerator=0)
            )
        )
    out = cors_pb2.CorsPolicy(
        allow_origin_string_match=[
            *(string_pb2.StringMatcher(exact=o) for o in policy.allow_origins),
            *(
                string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex=r))
                for r in policy.allow_origin_regexes
            ),
        ],
        allow_methods=",".join(policy.allow_methods),
        allow_headers=",".join(policy.allow_headers),
        expose_headers=",".join(policy.expose_headers),
    )
    if policy.max_age is not None:
        out.max_age = policy.max_age
    if policy.allow_credentials is not None:
        out.allow_credentials.CopyFrom(wrappers_pb2.BoolValue(value=policy.allow_credentials))
    return out
