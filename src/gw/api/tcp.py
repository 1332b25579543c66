"""`tcpGateway` (the established `TcpGateway`): a listener that proxies TCP connections.

Each of `tcpHosts` is a filter chain: plain, TLS terminated with the host's `sslConfig`
(`secretRef`), or TLS passed through untouched to the upstream, chosen by SNI
(`sslConfig.sniDomains` without a secret). `options` are the established
`TcpListenerOptions`: the TCP proxy's settings, a connection limit and a token bucket.
"""

from __future__ import annotations

from gw.api.duration import Duration
from gw.api.headers import HeaderValueOption
from gw.api.listener_options import ConnectionLimit
from gw.api.meta import Model, ResourceRef, UInt32
from gw.api.ratelimit import LocalRateLimit
from gw.api.tls import SslConfig
from gw.api.virtualservice import Destination, MultiDestination


class TunnelingConfig(Model):
    """Tunnel the TCP stream through an HTTP proxy upstream with `CONNECT <hostname>`."""

    hostname: str = ""
    headers_to_add: list[HeaderValueOption] = []


class TcpProxySettings(Model):
    max_connect_attempts: UInt32 | None = None
    idle_timeout: Duration | None = None
    tunneling_config: TunnelingConfig | None = None
    access_log_flush_interval: Duration | None = None


class TcpListenerOptions(Model):
    tcp_proxy_settings: TcpProxySettings | None = None
    connection_limit: ConnectionLimit | None = None
    local_ratelimit: LocalRateLimit | None = None


class ForwardSniClusterName(Model):
    """`{}`: the connection goes to the Envoy cluster named by the client's SNI."""


class TcpAction(Model):
    """Where a TCP host's connections go: exactly one of these."""

    single: Destination | None = None
    multi: MultiDestination | None = None
    upstream_group: ResourceRef | None = None
    forward_sni_cluster_name: ForwardSniClusterName | None = None


class TcpHost(Model):
    name: str = ""
    ssl_config: SslConfig | None = None
    destination: TcpAction | None = None


class TcpGateway(Model):
    tcp_hosts: list[TcpHost] = []
    options: TcpListenerOptions | None = None
