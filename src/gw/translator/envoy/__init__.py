"""Stage 2: Proxy → Envoy xDS resources.

`build_xds` walks the IR and builds protobuf messages directly (never dicts parsed later).
Resources are keyed by type URL and name, in sorted order, so that an unchanged Proxy gives
byte-identical output and the xDS server sends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.clusters import build_cluster, build_load_assignment
from gw.translator.envoy.extauth import server_headers
from gw.translator.envoy.filters import HTTP_FILTERS
from gw.translator.envoy.grpc_web import where_grpc_can_reach
from gw.translator.envoy.listeners import build_listener
from gw.translator.envoy.rewrite import auto_rewritten_clusters, name_static_endpoints
from gw.translator.envoy.routes import VirtualHostProtos, build_route_configurations
from gw.translator.envoy.secrets import build_secrets

__all__ = ["VirtualHostProtos", "Xds", "build_xds"]


@dataclass(frozen=True, slots=True)
class Xds:
    """xDS resources of one proxy: type URL → resource name → message."""

    resources: Mapping[str, Mapping[str, Message]]

    def of(self, type_url: str) -> Mapping[str, Message]:
        return self.resources.get(type_url, {})


def build_xds(proxy: ir.Proxy, protos: VirtualHostProtos | None = None) -> Xds:
    """`protos` (made from the previous translation's) reuses unchanged virtual hosts."""
    out: dict[str, dict[str, Message]] = {t: {} for t in names.TYPE_URLS}
    stripped = server_headers(proxy.auth_configs)
    for listener in proxy.listeners:
        listener = where_grpc_can_reach(listener, proxy.clusters)
        out[names.LISTENER][listener.name] = build_listener(listener, stripped)
        for route_configuration in build_route_configurations(listener, protos):
            out[names.ROUTE][route_configuration.name] = route_configuration
    for cluster in proxy.clusters:
        out[names.CLUSTER][cluster.name] = build_cluster(cluster)
        if cluster.discovery == "eds":
            out[names.ENDPOINT][cluster.name] = build_load_assignment(cluster)
    name_static_endpoints(out[names.CLUSTER], auto_rewritten_clusters(proxy))
    for secret in proxy.secrets:
        for resource in build_secrets(secret):
            out[names.SECRET][resource.name] = resource
    for http_filter in HTTP_FILTERS:
        for type_url, name, resource in http_filter.resources(proxy):
            out[type_url][name] = resource
    return Xds({t: dict(sorted(r.items())) for t, r in out.items()})
