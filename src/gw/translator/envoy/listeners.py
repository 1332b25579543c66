"""IR listeners → Envoy listeners: HTTP connection managers fed by RDS over ADS.

A plain listener has one filter chain for all its virtual hosts. A TLS listener (the HTTPS
one) has a chain per virtual host, selected by SNI (`envoy/tls.py`). The listener's options
(`ir.ListenerOptions`) shape how it accepts connections: socket options, buffer limit,
balancing across workers, the PROXY protocol (a listener filter, before TLS inspection:
the header comes first on the wire), a connection limit and a connection token bucket
(network filters before the HTTP connection manager, in each chain), and the access logs of
connections it ends itself. The manager itself is `envoy/hcm.py`; the HTTP filters of a
chain come from `envoy/filters.py`, asked with the listener when they take its options.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import address_pb2, base_pb2, socket_option_pb2
from envoy.config.listener.v3 import listener_components_pb2, listener_pb2
from envoy.extensions.filters.listener.proxy_protocol.v3 import proxy_protocol_pb2
from envoy.extensions.filters.network.connection_limit.v3 import connection_limit_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.filters.network.local_ratelimit.v3 import local_rate_limit_pb2
from envoy.extensions.transport_sockets.raw_buffer.v3 import raw_buffer_pb2
from envoy.extensions.transport_sockets.tcp_stats.v3 import tcp_stats_pb2
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names, tls
from gw.translator.envoy.access_log import build_access_logs
from gw.translator.envoy.filters import HTTP_FILTERS, HttpFilter
from gw.translator.envoy.hcm import build_manager
from gw.translator.envoy.listener_filter import ListenerConfigured
from gw.translator.envoy.packing import duration, pack
from gw.translator.envoy.ratelimit import token_bucket


def plain_listener(
    listener: ir.Listener,
    filters: Sequence[hcm_pb2.HttpFilter],
    server_headers: Sequence[str] = (),
    *,
    scoped: bool = False,
) -> listener_pb2.Listener:
    """A plain listener: one chain whose manager runs `filters` (`builder.py` says which
    the listener's virtual hosts need); `server_headers`: request headers gw's own servers
    set (see `envoy/hcm.py`); `scoped`: routes in shards (`shards.py`)."""
    manager = build_manager(
        listener, listener.route_config_name, filters, server_headers, scoped=scoped
    )
    out = _shell(listener)
    chain = listener_components_pb2.FilterChain(filters=[_filter(manager)])
    _limit_connections(chain, listener)
    _count_tcp(chain, listener)
    out.filter_chains.append(chain)
    return out


def tls_listener(
    listener: ir.Listener, chains: Iterable[listener_components_pb2.FilterChain]
) -> listener_pb2.Listener:
    """A TLS listener: the TLS inspector, then each virtual host's chain (`tls_chain`)."""
    out = _shell(listener)
    out.listener_filters.append(tls.tls_inspector())
    out.filter_chains.extend(chains)
    return out


def tls_chain(
    listener: ir.Listener, vhost: ir.VirtualHost, server_headers: Sequence[str] = ()
) -> listener_components_pb2.FilterChain:
    """A TLS virtual host's chain: its SNI names, its certificate, a manager of its own."""
    name = tls.route_config_name(listener, vhost)
    manager = build_manager(listener, name, http_filters([vhost], listener), server_headers)
    chain = tls.filter_chain(vhost, _filter(manager))
    _limit_connections(chain, listener)
    _count_tcp(chain, listener)
    return chain


def _shell(listener: ir.Listener) -> listener_pb2.Listener:
    """The listener without its filter chains: address and options."""
    out = listener_pb2.Listener(
        name=listener.name,
        address=_socket_address(listener.address, listener.port),
        # Fail loudly on a port clash instead of silently sharing it with another process.
        enable_reuse_port=wrappers_pb2.BoolValue(value=False),
    )
    _apply_options(out, listener.options)
    return out


def _apply_options(out: listener_pb2.Listener, options: ir.ListenerOptions) -> None:
    out.socket_options.extend(_socket_option(o) for o in options.socket_options)
    if options.per_connection_buffer_limit_bytes is not None:
        out.per_connection_buffer_limit_bytes.CopyFrom(
            wrappers_pb2.UInt32Value(value=options.per_connection_buffer_limit_bytes)
        )
    if options.exact_balance:
        out.connection_balance_config.exact_balance.SetInParent()
    if options.proxy_protocol is not None:
        out.listener_filters.append(_proxy_protocol(options.proxy_protocol))
    out.access_log.extend(build_access_logs(options.listener_access_logs))


def _socket_option(option: ir.SocketOption) -> socket_option_pb2.SocketOption:
    out = socket_option_pb2.SocketOption(
        description=option.description,
        level=option.level,
        name=option.name,
        state=socket_option_pb2.SocketOption.SocketState.Value(option.state),
    )
    if option.buf_hex is not None:
        out.buf_value = bytes.fromhex(option.buf_hex)
    else:
        out.int_value = option.int_value or 0
    return out


def _proxy_protocol(config: ir.ProxyProtocol) -> listener_components_pb2.ListenerFilter:
    rule = proxy_protocol_pb2.ProxyProtocol.Rule
    pair = proxy_protocol_pb2.ProxyProtocol.KeyValuePair
    message = proxy_protocol_pb2.ProxyProtocol(
        rules=[
            rule(
                tlv_type=r.tlv_type,
                on_tlv_present=pair(metadata_namespace=r.metadata_namespace, key=r.key),
            )
            for r in config.rules
        ],
        allow_requests_without_proxy_protocol=config.allow_requests_without_proxy_protocol,
    )
    return listener_components_pb2.ListenerFilter(
        name=names.PROXY_PROTOCOL, typed_config=pack(message)
    )


def _limit_connections(chain: listener_components_pb2.FilterChain, listener: ir.Listener) -> None:
    """Put the connection limit and the connection token bucket (if any) before the chain's
    connection manager: the limit first, so that a connection it closes takes no token."""
    stat_prefix = listener.name.replace(":", "_")
    added = []
    limit = listener.options.connection_limit
    if limit is not None:
        config = connection_limit_pb2.ConnectionLimit(
            stat_prefix=stat_prefix,
            max_connections=wrappers_pb2.UInt64Value(value=limit.max_connections),
        )
        if limit.delay_ms is not None:
            config.delay.CopyFrom(duration(limit.delay_ms))
        added.append(
            listener_components_pb2.Filter(name=names.CONNECTION_LIMIT, typed_config=pack(config))
        )
    bucket = listener.options.connection_ratelimit
    if bucket is not None:
        rate = local_rate_limit_pb2.LocalRateLimit(
            stat_prefix=stat_prefix, token_bucket=token_bucket(bucket)
        )
        added.append(
            listener_components_pb2.Filter(
                name=names.NETWORK_LOCAL_RATELIMIT, typed_config=pack(rate)
            )
        )
    if not added:
        return
    filters = [*added, *chain.filters]
    del chain.filters[:]
    chain.filters.extend(filters)


def _count_tcp(chain: listener_components_pb2.FilterChain, listener: ir.Listener) -> None:
    """`tcpStats`: the chain's transport socket (TLS, or plain bytes) wrapped in Envoy's
    `tcp_stats` socket, which records the kernel's TCP statistics of each connection."""
    if not listener.options.tcp_stats:
        return
    inner = chain.transport_socket
    if not inner.name:
        inner = base_pb2.TransportSocket(
            name=names.RAW_BUFFER, typed_config=pack(raw_buffer_pb2.RawBuffer())
        )
    wrapped = base_pb2.TransportSocket(
        name=names.TCP_STATS, typed_config=pack(tcp_stats_pb2.Config(transport_socket=inner))
    )
    chain.transport_socket.CopyFrom(wrapped)


def _filter(manager: hcm_pb2.HttpConnectionManager) -> listener_components_pb2.Filter:
    return listener_components_pb2.Filter(name=names.HCM, typed_config=pack(manager))


def http_filters(
    vhosts: Sequence[ir.VirtualHost], listener: ir.Listener
) -> list[hcm_pb2.HttpFilter]:
    """The HTTP filters the given virtual hosts of `listener` need, in chain order."""
    chain = []
    for http_filter in HTTP_FILTERS:
        built = listener_http_filter(http_filter, listener, vhosts)
        if built is not None:
            chain.append(built)
    return chain


def listener_http_filter(
    http_filter: HttpFilter, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
) -> hcm_pb2.HttpFilter | None:
    """One filter of `listener`'s chain (serving `vhosts`), or None when not needed."""
    if isinstance(http_filter, ListenerConfigured):
        return http_filter.for_listener(listener, vhosts)
    return http_filter.listener_filter(vhosts)


def _socket_address(address: str, port: int) -> address_pb2.Address:
    return address_pb2.Address(
        socket_address=address_pb2.SocketAddress(
            address=address,
            port_value=port,
            # `::` also accepts IPv4 clients.
            ipv4_compat=address == "::",
        )
    )
