"""IR listeners → Envoy listeners: HTTP connection managers fed by RDS over ADS.

A plain listener has one filter chain for all its virtual hosts. A TLS listener (the HTTPS
one) has a chain per virtual host, selected by SNI (`envoy/tls.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from envoy.config.core.v3 import address_pb2, protocol_pb2
from envoy.config.listener.v3 import listener_components_pb2, listener_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names, tls
from gw.translator.envoy.filters import HTTP_FILTERS
from gw.translator.envoy.packing import pack


def build_listener(listener: ir.Listener) -> listener_pb2.Listener:
    out = listener_pb2.Listener(
        name=listener.name,
        address=_socket_address(listener.address, listener.port),
        # Fail loudly on a port clash instead of silently sharing it with another process.
        enable_reuse_port=wrappers_pb2.BoolValue(value=False),
    )
    if tls.is_tls(listener):
        out.listener_filters.append(tls.tls_inspector())
        for vhost in listener.virtual_hosts:
            manager = _manager(listener, tls.route_config_name(listener, vhost), [vhost])
            out.filter_chains.append(tls.filter_chain(vhost, _filter(manager)))
    else:
        manager = _manager(listener, listener.route_config_name, listener.virtual_hosts)
        out.filter_chains.append(listener_components_pb2.FilterChain(filters=[_filter(manager)]))
    return out


def _manager(
    listener: ir.Listener, route_config_name: str, vhosts: Sequence[ir.VirtualHost]
) -> hcm_pb2.HttpConnectionManager:
    return hcm_pb2.HttpConnectionManager(
        stat_prefix=listener.name.replace(":", "_"),
        codec_type=hcm_pb2.HttpConnectionManager.AUTO,
        rds=hcm_pb2.Rds(
            config_source=names.ads_config_source(), route_config_name=route_config_name
        ),
        http_filters=http_filters(vhosts),
        # Path tricks must not dodge a prefix: `/a/../b` and `//` are resolved before
        # matching, and an encoded slash (`/public/..%2fadmin`), which would reach the
        # upstream as a path it may decode to `/admin`, is answered with a redirect to the
        # decoded, normalized path, which then goes through the route table like any path.
        normalize_path=wrappers_pb2.BoolValue(value=True),
        merge_slashes=True,
        path_with_escaped_slashes_action=hcm_pb2.HttpConnectionManager.UNESCAPE_AND_REDIRECT,
        # `x_user` is `x-user` to upstreams that map both to one variable (CGI, some
        # frameworks): a client could pass off its own copy of a header gw sets from a
        # verified token. Dropped, as nginx does by default.
        common_http_protocol_options=protocol_pb2.HttpProtocolOptions(
            headers_with_underscores_action=protocol_pb2.HttpProtocolOptions.DROP_HEADER
        ),
    )


def _filter(manager: hcm_pb2.HttpConnectionManager) -> listener_components_pb2.Filter:
    return listener_components_pb2.Filter(name=names.HCM, typed_config=pack(manager))


def http_filters(vhosts: Sequence[ir.VirtualHost]) -> list[hcm_pb2.HttpFilter]:
    """The HTTP filters the given virtual hosts need, in chain order."""
    chain = []
    for http_filter in HTTP_FILTERS:
        built = http_filter.listener_filter(vhosts)
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
