"""Google Cloud identity tokens → Envoy's gcp_authn HTTP filter, on a listener whose routes
reach a `gcp` Upstream's cluster.

The filter reads the audience from the cluster the route chose (its `typed_filter_metadata`),
so requests to any other cluster pass untouched. For one with an audience it asks the
metadata server, through `gw~gcp-metadata`, for an identity token, keeps it until it
expires (the token cache), and sends it upstream as `Authorization: Bearer <token>`,
replacing what the client sent. When no token comes (the metadata server is unreachable or
refuses), Envoy sends the request on without one, and the service answers 401 or 403.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import backoff_pb2, base_pb2
from envoy.extensions.filters.http.gcp_authn.v3 import gcp_authn_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import wrappers_pb2
from google.protobuf.message import Message

from gw import defaults
from gw.translator import ir
from gw.translator.envoy.durations import duration_ms
from gw.translator.envoy.packing import pack

GCP_AUTHN = "envoy.filters.http.gcp_authn"
#: How long one token request may take; the metadata server answers in milliseconds.
TOKEN_TIMEOUT_MS = 5000
#: Tokens kept, one per audience (Envoy's default, 0, would fetch one per request).
TOKEN_CACHE_SIZE = 1000
#: A token request that fails (5xx, reset, no connection) is tried again twice, after a
#: jittered back-off from 100 ms.
TOKEN_RETRIES = 2


def add_audience(out: cluster_pb2.Cluster, cluster: ir.Cluster) -> None:
    """The audience of a `gcp` Upstream's cluster, where the filter looks for it."""
    if cluster.gcp_audience is not None:
        out.metadata.typed_filter_metadata[GCP_AUTHN].CopyFrom(
            pack(gcp_authn_pb2.Audience(url=cluster.gcp_audience))
        )


def _to_gcp(route: ir.Route) -> bool:
    return isinstance(route.action, ir.Forward) and any(
        c.gcp_identity_token for c in route.action.clusters
    )


def filter_config() -> gcp_authn_pb2.GcpAuthnFilterConfig:
    return gcp_authn_pb2.GcpAuthnFilterConfig(
        cluster=defaults.GCP_METADATA_CLUSTER,
        timeout=duration_ms(TOKEN_TIMEOUT_MS),
        cache_config=gcp_authn_pb2.TokenCacheConfig(
            cache_size=wrappers_pb2.UInt64Value(value=TOKEN_CACHE_SIZE)
        ),
        retry_policy=base_pb2.RetryPolicy(
            num_retries=wrappers_pb2.UInt32Value(value=TOKEN_RETRIES),
            retry_back_off=backoff_pb2.BackoffStrategy(
                base_interval=duration_ms(100), max_interval=duration_ms(1000)
            ),
        ),
    )


class GcpAuthnFilter:
    name = GCP_AUTHN
    configures_routes = False

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not any(_to_gcp(r) for v in vhosts for r in v.routes):
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(filter_config()))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        return None

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()
