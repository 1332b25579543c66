"""IR clusters → Envoy clusters and, for EDS clusters, their load assignments."""

from __future__ import annotations

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, protocol_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2
from envoy.extensions.upstreams.http.v3 import http_protocol_options_pb2 as http_options_pb2
from google.protobuf import duration_pb2, wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack

_HTTP_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"


def build_cluster(cluster: ir.Cluster) -> cluster_pb2.Cluster:
    out = cluster_pb2.Cluster(
        name=cluster.name,
        connect_timeout=_duration_ms(cluster.connect_timeout_ms),
    )
    if cluster.discovery == "eds":
        out.type = cluster_pb2.Cluster.EDS
        out.eds_cluster_config.eds_config.CopyFrom(names.ads_config_source())
    else:
        out.type = (
            cluster_pb2.Cluster.STATIC
            if cluster.discovery == "static"
            else (cluster_pb2.Cluster.STRICT_DNS)
        )
        if cluster.discovery == "dns":
            out.dns_lookup_family = cluster_pb2.Cluster.V4_PREFERRED
        out.load_assignment.CopyFrom(build_load_assignment(cluster))
    if cluster.http2:
        options = http_options_pb2.HttpProtocolOptions(
            explicit_http_config=http_options_pb2.HttpProtocolOptions.ExplicitHttpConfig(
                http2_protocol_options=protocol_pb2.Http2ProtocolOptions()
            )
        )
        out.typed_extension_protocol_options[_HTTP_OPTIONS].CopyFrom(pack(options))
    return out


def build_load_assignment(cluster: ir.Cluster) -> endpoint_pb2.ClusterLoadAssignment:
    lb_endpoints = []
    for endpoint in cluster.endpoints:
        lb = endpoint_components_pb2.LbEndpoint(
            endpoint=endpoint_components_pb2.Endpoint(
                address=address_pb2.Address(
                    socket_address=address_pb2.SocketAddress(
                        address=endpoint.address, port_value=endpoint.port
                    )
                )
            )
        )
        if endpoint.weight is not None:
            lb.load_balancing_weight.CopyFrom(wrappers_pb2.UInt32Value(value=endpoint.weight))
        lb_endpoints.append(lb)
    return endpoint_pb2.ClusterLoadAssignment(
        cluster_name=cluster.name,
        endpoints=[endpoint_components_pb2.LocalityLbEndpoints(lb_endpoints=lb_endpoints)],
    )


def _duration_ms(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)
