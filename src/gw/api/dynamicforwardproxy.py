"""`routeAction.dynamicForwardProxy`: the upstream is the request's own host, resolved by
Envoy's DNS cache, instead of an Upstream; and a Gateway's
`httpGateway.options.dynamicForwardProxy`, how that cache and those connections work on
its listener."""

from __future__ import annotations

from typing import Any, Literal

from gw.api.connection import CircuitBreakerConfig
from gw.api.duration import Duration
from gw.api.meta import Model, UInt32
from gw.api.tls import UpstreamSslConfig


class DynamicForwardProxyRoute(Model):
    """At most one of `hostRewrite` and `autoHostRewriteHeader`."""

    #: Forward to this host instead of the request's.
    host_rewrite: str | None = None
    #: Forward to the host named in this request header (the Host is rewritten to it).
    auto_host_rewrite_header: str | None = None


class DnsCacheCircuitBreakers(Model):
    max_pending_requests: UInt32 | None = None


class RefreshRate(Model):
    base_interval: Duration | None = None
    max_interval: Duration | None = None


class DnsResolverOptions(Model):
    use_tcp_for_dns_lookups: bool = False
    no_default_search_domain: bool = False


class ResolverSocketAddress(Model):
    """A socket address as the established `SocketAddress` spells it (`address` and
    `portValue`; `protocol` TCP or UDP)."""

    protocol: Literal["TCP", "UDP"] = "TCP"
    address: str = ""
    port_value: UInt32 | None = None
    named_port: str | None = None
    resolver_name: str | None = None
    ipv4_compat: bool = False


class ResolverAddress(Model):
    socket_address: ResolverSocketAddress | None = None
    pipe: dict[str, Any] | None = None


class CaresDnsResolverConfig(Model):
    resolvers: list[ResolverAddress] = []
    dns_resolver_options: DnsResolverOptions | None = None


class DnsCacheConfig(Model):
    """Envoy's DNS cache for the proxied hosts; unset fields keep Envoy's defaults."""

    dns_lookup_family: Literal["V4_PREFERRED", "V4_ONLY", "V6_ONLY", "AUTO", "ALL"] = "V4_PREFERRED"
    dns_refresh_rate: Duration | None = None
    host_ttl: Duration | None = None
    max_hosts: UInt32 | None = None
    dns_failure_refresh_rate: RefreshRate | None = None
    dns_cache_circuit_breaker: DnsCacheCircuitBreakers | None = None
    cares_dns: CaresDnsResolverConfig | None = None
    apple_dns: dict[str, Any] | None = None
    preresolve_hostnames: list[ResolverSocketAddress] = []
    dns_query_timeout: Duration | None = None


class DynamicForwardProxyListener(Model):
    """`httpGateway.options.dynamicForwardProxy`: the DNS cache (required) and upstream
    connections of the listener's dynamically forwarded routes."""

    dns_cache_config: DnsCacheConfig | None = None
    save_upstream_address: bool = False
    ssl_config: UpstreamSslConfig | None = None
    circuit_breakers: CircuitBreakerConfig | None = None
