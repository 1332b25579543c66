"""IR listeners → Envoy listeners: HTTP connection managers fed by RDS over ADS, and TCP
proxies.

A plain listener has one filter chain for all its virtual hosts. A TLS listener (the HTTPS
one) has a chain per virtual host, selected by SNI (`envoy/tls.py`). A TCP listener has a
chain per TCP host (`envoy/tcp.py`). A hybrid listener has the chains of each of its parts,
each matching its part's source ranges too; the listener inspects TLS whenever a chain
matches SNI names or terminates TLS. The listener's options (`ir.ListenerOptions`) shape
how it accepts connections: socket options, buffer limit, balancing across workers, the
PROXY protocol (a listener filter, before TLS inspection: the header comes first on the
wire), a connection limit and a connection token bucket (network filters before the HTTP
connection manager, in each HTTP chain), TCP statistics, and the access logs of connections
it ends itself. The manager itself is `envoy/hcm.py`; the HTTP filters of a chain come from
`envoy/filters.py`, asked with the listener when they take its options.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from envoy.config.core.v3 import address_pb2, base_pb2, socket_option_pb2
from envoy.config.listener.v3 import listener_components_pb2, listener_pb2
from envoy.extensions.filters.listener.proxy_protocol.v3 import proxy_protocol_pb2
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
from gw.translator.envoy.packing import pack
from gw.translator.envoy.ratelimit import token_bucket
from gw.translator.envoy.tcp import connection_limit, tcp_filter_chains


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


def layer4_listener(
    listener: ir.Listener, server_headers: Sequence[str] = ()
) -> listener_pb2.Listener:
    """A TCP listener, or a hybrid one (parts matched by source, each HTTP or TCP): built
    whole every time (`builder.py` reuses only plain and TLS HTTP listeners)."""
    out = _shell(listener)
    chains = _layer4_chains(listener, server_headers)
    tls_chains = [
        c.filter_chain_match.server_names or c.HasField("transport_socket") for c in chains
    ]
    if any(tls_chains):
        out.listener_filters.append(tls.tls_inspector())
        # A client that sends nothing (the server speaks first) is no TLS client: after
        # Envoy's wait for a ClientHello it goes to a plain chain rather than away.
        if not all(tls_chains):
            out.continue_on_listener_filters_timeout = True
    for chain in chains:
        _count_tcp(chain, listener)
    out.filter_chains.extend(chains)
    return out


def _http_chains(
    listener: ir.Listener, server_headers: Sequence[str]
) -> list[listener_components_pb2.FilterChain]:
    """A chain per TLS virtual host, or one chain for all the plain ones."""
    chains = []
    if tls.is_tls(listener):
        for vhost in listener.virtual_hosts:
            name = tls.route_config_name(listener, vhost)
            manager = build_manager(listener, name, http_filters([vhost], listener), server_headers)
            chains.append(tls.filter_chain(vhost, _filter(manager)))
    else:
        vhosts = listener.virtual_hosts
        manager = build_manager(
            listener, listener.route_config_name, http_filters(vhosts, listener), server_headers
        )
        chains.append(listener_components_pb2.FilterChain(filters=[_filter(manager)]))
    for chain in chains:
        _limit_connections(chain, listener)
        _count_tcp(chain, listener)
    return chains


def _layer4_chains(
    listener: ir.Listener, server_headers: Sequence[str]
) -> list[listener_components_pb2.FilterChain]:
    """A TCP listener's chains, or each part's of a hybrid one, matching the part's source
    ranges and named after the part (a virtual host may be served by two parts)."""
    if listener.tcp is not None:
        return tcp_filter_chains(listener.name, listener.tcp)
    chains = []
    for part in listener.matched:
        if part.http is not None:
            found = _http_chains(part.http, server_headers)
        else:
            assert part.tcp is not None
            found = tcp_filter_chains(part.name, part.tcp)
        for chain in found:
            chain.name = f"{part.name}/{chain.name}" if chain.name else part.name
            if not part.match.source_ranges:
                continue
            chain.filter_chain_match.source_prefix_ranges.extend(
                address_pb2.CidrRange(
                    address_prefix=address, prefix_len=wrappers_pb2.UInt32Value(value=length)
                )
                for address, length in part.match.source_ranges
            )
        chains.extend(found)
    return chains


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
        added.append(connection_limit(stat_prefix, limit))
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
    """One filter of `listener`'s chain (serving `vhosts`), or None when not needed.

    A filter is `ListenerConfigured` when it has `for_listener`: asked directly, not with
    `isinstance` on the runtime-checkable protocol, which walks the protocol's members in
    Python each time (asked per filter and shard: 0.6 s of a 4 s profile of 10,000
    virtual hosts)."""
    if getattr(http_filter, "for_listener", None) is not None:
        return cast(ListenerConfigured, http_filter).for_listener(listener, vhosts)
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
