"""The Envoy bootstrap: who the proxy is (node id, role) and where its config comes from.

Everything else — listeners, routes, clusters, secrets — arrives over ADS from the control
plane. Facts that shape it (ENVOY-NOTES.md): the ADS cluster must speak HTTP/2; a short
retry back-off makes Envoy reconnect within a second after a control-plane restart.

The ADS stream is incremental (delta xDS, `DELTA_GRPC`): a change sends the resources that
changed, not every resource of its type again (`gw.xds.delta`). `delta=False` makes a
state-of-the-world bootstrap, which the control plane serves as well (older bootstraps).

The overload manager caps the downstream connections of all listeners together
(`max_downstream_connections`, the established install's `globalDownstreamMaxConnections`):
a flood of idle connections cannot exhaust the proxy's file descriptors. The admin listener
is exempt, so an operator can still look at a proxy under such a flood.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from envoy.config.bootstrap.v3 import bootstrap_pb2
from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import (
    address_pb2,
    backoff_pb2,
    base_pb2,
    config_source_pb2,
    grpc_service_pb2,
    protocol_pb2,
)
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2
from envoy.config.overload.v3 import overload_pb2
from envoy.extensions.resource_monitors.downstream_connections.v3 import (
    downstream_connections_pb2,
)
from envoy.extensions.upstreams.http.v3 import http_protocol_options_pb2 as http_options_pb2
from google.protobuf import any_pb2, duration_pb2, json_format, struct_pb2

from gw import defaults
from gw.proxy.admin import admin_cluster, admin_listener, admin_socket
from gw.proxy.xds_tls import XdsTls, xds_transport_socket

XDS_CLUSTER = defaults.XDS_CLUSTER
UNIX_PREFIX = "unix:"


@dataclass(frozen=True, slots=True, kw_only=True)
class BootstrapOptions:
    node_id: str
    role: str = defaults.PROXY_ROLE
    cluster: str = defaults.PROXY_NAME
    xds_host: str = defaults.LOOPBACK
    xds_port: int = defaults.XDS_PORT
    admin_host: str = defaults.LOOPBACK
    admin_port: int = defaults.PROXY_ADMIN_PORT
    #: Mutual TLS to the control plane (gw.proxy.xds_tls); None: plaintext.
    xds_tls: XdsTls | None = None
    #: Incremental (delta) ADS; False: state of the world.
    delta: bool = True
    max_downstream_connections: int = defaults.GLOBAL_DOWNSTREAM_MAX_CONNECTIONS


def build_bootstrap(options: BootstrapOptions) -> bootstrap_pb2.Bootstrap:
    ads = config_source_pb2.ConfigSource(
        ads=config_source_pb2.AggregatedConfigSource(),
        resource_api_version=config_source_pb2.V3,
    )
    grpc_service = grpc_service_pb2.GrpcService(
        envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
            cluster_name=XDS_CLUSTER,
            retry_policy=base_pb2.RetryPolicy(
                retry_back_off=backoff_pb2.BackoffStrategy(
                    base_interval=duration_pb2.Duration(nanos=100_000_000),
                    max_interval=duration_pb2.Duration(seconds=1),
                )
            ),
        )
    )
    return bootstrap_pb2.Bootstrap(
        node=_node(options),
        dynamic_resources=bootstrap_pb2.Bootstrap.DynamicResources(
            ads_config=config_source_pb2.ApiConfigSource(
                api_type=config_source_pb2.ApiConfigSource.DELTA_GRPC
                if options.delta
                else config_source_pb2.ApiConfigSource.GRPC,
                transport_api_version=config_source_pb2.V3,
                grpc_services=[grpc_service],
                set_node_on_first_message_only=True,
            ),
            cds_config=ads,
            lds_config=ads,
        ),
        static_resources=bootstrap_pb2.Bootstrap.StaticResources(
            listeners=[admin_listener(_address(options.admin_host, options.admin_port))],
            clusters=[_xds_cluster(options), admin_cluster(options.node_id)],
        ),
        # Envoy's admin sits behind the static admin listener on `admin_port` (see admin.py).
        admin=bootstrap_pb2.Admin(address=admin_socket(options.node_id)),
        overload_manager=_connection_limit(options.max_downstream_connections),
    )


def _connection_limit(limit: int) -> overload_pb2.OverloadManager:
    monitor = downstream_connections_pb2.DownstreamConnectionsConfig(
        max_active_downstream_connections=limit
    )
    packed = any_pb2.Any()
    packed.Pack(monitor)
    return overload_pb2.OverloadManager(
        resource_monitors=[
            overload_pb2.ResourceMonitor(
                name="envoy.resource_monitors.global_downstream_max_connections",
                typed_config=packed,
            )
        ]
    )


def bootstrap_json(options: BootstrapOptions) -> str:
    return json_format.MessageToJson(build_bootstrap(options), indent=2, sort_keys=True)


def _node(options: BootstrapOptions) -> base_pb2.Node:
    metadata = struct_pb2.Struct()
    metadata.update({"role": options.role})
    return base_pb2.Node(id=options.node_id, cluster=options.cluster, metadata=metadata)


def _xds_cluster(options: BootstrapOptions) -> cluster_pb2.Cluster:
    http2 = http_options_pb2.HttpProtocolOptions(
        explicit_http_config=http_options_pb2.HttpProtocolOptions.ExplicitHttpConfig(
            http2_protocol_options=protocol_pb2.Http2ProtocolOptions()
        )
    )
    packed = any_pb2.Any()
    packed.Pack(http2)
    static = _is_ip(options.xds_host) or options.xds_host.startswith(UNIX_PREFIX)
    return cluster_pb2.Cluster(
        name=XDS_CLUSTER,
        type=cluster_pb2.Cluster.STATIC if static else cluster_pb2.Cluster.STRICT_DNS,
        connect_timeout=duration_pb2.Duration(seconds=1),
        load_assignment=endpoint_pb2.ClusterLoadAssignment(
            cluster_name=XDS_CLUSTER,
            endpoints=[
                endpoint_components_pb2.LocalityLbEndpoints(
                    lb_endpoints=[
                        endpoint_components_pb2.LbEndpoint(
                            endpoint=endpoint_components_pb2.Endpoint(
                                address=_address(options.xds_host, options.xds_port)
                            )
                        )
                    ]
                )
            ],
        ),
        typed_extension_protocol_options={
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": packed
        },
        transport_socket=xds_transport_socket(options.xds_tls) if options.xds_tls else None,
    )


def _address(host: str, port: int) -> address_pb2.Address:
    """A TCP address, or a Unix socket when `host` is `unix:<path>` (`port` is then unused):
    a socket file reaches across network namespaces, as between pods on one node."""
    if host.startswith(UNIX_PREFIX):
        return address_pb2.Address(pipe=address_pb2.Pipe(path=host[len(UNIX_PREFIX) :]))
    return address_pb2.Address(
        socket_address=address_pb2.SocketAddress(address=host, port_value=port)
    )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
