"""Routes forwarded by Envoy's dynamic forward proxy (to the host the request names), and
how a listener's DNS cache and connections for them work (a Gateway's
`httpGateway.options.dynamicForwardProxy`)."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.clusters import CircuitBreakers
from gw.translator.ir.tls import UpstreamTls


@dataclass(frozen=True, slots=True, kw_only=True)
class DynamicForwardProxy:
    #: Forward to this host (and rewrite the Host to it).
    host_rewrite: str | None = None
    #: Forward to the host in this request header (and rewrite the Host to it).
    host_header: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DnsCache:
    """Envoy's DNS cache of the proxied hosts; None keeps Envoy's default."""

    lookup_family: str = "V4_PREFERRED"
    refresh_rate_ms: int | None = None
    host_ttl_ms: int | None = None
    max_hosts: int | None = None
    failure_refresh_base_ms: int | None = None
    failure_refresh_max_ms: int | None = None
    #: Lookups waiting at once (`dnsCacheCircuitBreaker.maxPendingRequests`).
    max_pending_lookups: int | None = None
    #: c-ares with these name servers (`(address, port)`), else the system's resolver.
    resolvers: tuple[tuple[str, int], ...] = ()
    use_tcp: bool = False
    no_default_search_domain: bool = False
    #: Hosts resolved when the cache starts (`(host, port)`).
    preresolve: tuple[tuple[str, int], ...] = ()
    query_timeout_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DynamicForwardProxyListener:
    """A listener's own DNS cache for its dynamically forwarded routes, and their upstream
    connections: TLS, circuit breakers, the upstream address kept in the filter state."""

    dns_cache: DnsCache
    save_upstream_address: bool = False
    tls: UpstreamTls | None = None
    circuit_breakers: CircuitBreakers | None = None
