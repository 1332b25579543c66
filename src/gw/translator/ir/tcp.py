"""TCP proxying: the hosts of a TCP gateway (each a filter chain of its listener) and the
settings of Envoy's TCP proxy they share (`listeners.TcpListener` holds them)."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.headers import HeaderValue
from gw.translator.ir.routes import WeightedCluster
from gw.translator.ir.tls import TlsTermination


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpTunnel:
    """Send the stream through an HTTP proxy (the destination) as `CONNECT hostname`."""

    hostname: str
    headers: tuple[HeaderValue, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpProxySettings:
    max_connect_attempts: int | None = None
    idle_timeout_ms: int | None = None
    access_log_flush_interval_ms: int | None = None
    tunnel: TcpTunnel | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TcpHost:
    """One filter chain: connections whose SNI is one of `server_names` (none: any
    connection), TLS terminated when `tls` is set (its names then select it), proxied to
    `clusters` by weight, or, with `forward_sni`, to the cluster the SNI names. No clusters
    and no `forward_sni`: a destination that does not exist (connections are closed)."""

    name: str
    clusters: tuple[WeightedCluster, ...] = ()
    forward_sni: bool = False
    tls: TlsTermination | None = None
    server_names: tuple[str, ...] = ()
