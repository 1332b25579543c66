"""IR listeners → Envoy listeners: an HTTP connection manager fed by RDS over ADS."""

from __future__ import annotations

from envoy.config.core.v3 import address_pb2
from envoy.config.listener.v3 import listener_components_pb2, listener_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.filters import HTTP_FILTERS
from gw.translator.envoy.packing import pack


def build_listener(listener: ir.Listener) -> listener_pb2.Listener:
    manager = hcm_pb2.HttpConnectionManager(
        stat_prefix=listener.name.replace(":", "_"),
        codec_type=hcm_pb2.HttpConnectionManager.AUTO,
        rds=hcm_pb2.Rds(
            config_source=names.ads_config_source(),
            route_config_name=listener.route_config_name,
        ),
        http_filters=http_filters(listener),
        normalize_path=wrappers_pb2.BoolValue(value=True),
        merge_slashes=True,
    )
    return listener_pb2.Listener(
        name=listener.name,
        address=_socket_address(listener.address, listener.port),
        # Fail loudly on a port clash instead of silently sharing it with another process.
        enable_reuse_port=wrappers_pb2.BoolValue(value=False),
        filter_chains=[
            listener_components_pb2.FilterChain(
                filters=[listener_components_pb2.Filter(name=names.HCM, typed_config=pack(manager))]
            )
        ],
    )


def http_filters(listener: ir.Listener) -> list[hcm_pb2.HttpFilter]:
    chain = []
    for http_filter in HTTP_FILTERS:
        built = http_filter.listener_filter(listener.virtual_hosts)
        if built is not None:
            chain.append(built)
    return chain


def _socket_address(address: str, port: int) -> address_pb2.Address:
    return address_pb2.Address(
        socket_address=address_pb2.SocketAddress(
            address=address,
            port_value=port,
            # `::` also accepts IPv4 clients.
            ipv4_compat=address == "::",
        )
    )
