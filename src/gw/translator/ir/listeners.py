"""A listener: an address and port, how it accepts connections, and what it serves: virtual
hosts over HTTP (how it speaks HTTP), TCP hosts (`TcpListener`), or both, each part taking
the connections its matcher picks (`MatchedListener`, a hybrid gateway's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gw.translator.ir.access_log import AccessLog
from gw.translator.ir.hcm import HttpSettings
from gw.translator.ir.http_listener import HttpListenerOptions
from gw.translator.ir.ratelimit import LocalLimit
from gw.translator.ir.routeconfig import RouteConfigOptions
from gw.translator.ir.source import SourceRef
from gw.translator.ir.tcp import TcpHost, TcpProxySettings
from gw.translator.ir.virtualhosts import VirtualHost


@dataclass(frozen=True, slots=True, kw_only=True)
class SocketOption:
    """A `setsockopt` on the listening socket: an integer or a byte string value (`buf_hex`,
    in hex so that the IR stays plain text), applied before bind, once bound, or once
    listening."""

    description: str = ""
    level: int
    name: int
    int_value: int | None = None
    buf_hex: str | None = None
    state: Literal["STATE_PREBIND", "STATE_BOUND", "STATE_LISTENING"] = "STATE_PREBIND"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyProtocolRule:
    """A PROXY protocol v2 TLV whose value, when present, is stored as dynamic metadata."""

    tlv_type: int
    metadata_namespace: str = ""
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyProtocol:
    """Connections start with a PROXY protocol header (v1 or v2) naming the real client."""

    rules: tuple[ProxyProtocolRule, ...] = ()
    allow_requests_without_proxy_protocol: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionLimit:
    """At most `max_connections` open connections on the listener; one more is closed
    after `delay_ms`."""

    max_connections: int
    delay_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ListenerOptions:
    """How the listener accepts connections (a Gateway's `options`, `useProxyProto`,
    `httpGateway.options.connectionLimit`); unset fields keep Envoy's defaults."""

    socket_options: tuple[SocketOption, ...] = ()
    per_connection_buffer_limit_bytes: int | None = None
    proxy_protocol: ProxyProtocol | None = None
    connection_limit: ConnectionLimit | None = None
    exact_balance: bool = False
    #: `accessLoggingService`: an entry per request (written by the HTTP connection
    #: manager); `listenerAccessLoggingService`: an entry per connection the listener
    #: itself ends (no filter chain for it, a bad PROXY protocol header).
    access_logs: tuple[AccessLog, ...] = ()
    listener_access_logs: tuple[AccessLog, ...] = ()
    #: `httpGateway.options.networkLocalRatelimit`: a token bucket of connections.
    connection_ratelimit: LocalLimit | None = None
    #: `tcpStats`: the kernel's TCP statistics of each connection (retransmits, RTT, ...)
    #: as Envoy statistics of the listener.
    tcp_stats: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpListener:
    """TCP hosts, each a filter chain, and what they share: the TCP proxy's settings, a
    connection limit and a token bucket of connections (both per chain)."""

    hosts: tuple[TcpHost, ...]
    settings: TcpProxySettings = field(default_factory=TcpProxySettings)
    connection_limit: ConnectionLimit | None = None
    local_ratelimit: LocalLimit | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainMatch:
    """Which connections a matched part of a listener takes: those from `source_ranges`
    (`(address, prefix length)`, none: any source)."""

    source_ranges: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchedListener:
    """One part of a hybrid listener: the connections `match` picks, served over HTTP
    (`http`: a listener of its own for its virtual hosts, settings and route configuration
    names, never served by itself) or proxied over TCP (`tcp`)."""

    #: Unique in its listener: its filter chains, statistics and route configurations are
    #: named after it.
    name: str
    match: ChainMatch
    http: Listener | None = None
    tcp: TcpListener | None = None
    #: The MatchableHttpGateway / MatchableTcpGateway it comes from, if any.
    source: SourceRef | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Listener:
    name: str
    address: str
    port: int
    virtual_hosts: tuple[VirtualHost, ...]
    #: The Gateway resource it comes from; None for the built-in gateways.
    gateway: SourceRef | None = None
    http: HttpSettings = field(default_factory=HttpSettings)
    options: ListenerOptions = field(default_factory=ListenerOptions)
    #: The HTTP filters its own options put on its chain (`httpGateway.options`).
    plugins: HttpListenerOptions = field(default_factory=HttpListenerOptions)
    #: A TCP gateway's hosts (then no virtual hosts).
    tcp: TcpListener | None = None
    #: A hybrid gateway's parts (then no virtual hosts and no `tcp`), in matcher order.
    matched: tuple[MatchedListener, ...] = ()
    #: The Gateway's `routeOptions` for the route configurations of this listener.
    route_options: RouteConfigOptions | None = None

    @property
    def route_config_name(self) -> str:
        return f"{self.name}-routes"
