"""A Gateway's `httpGateway.options.dynamicForwardProxy` → `ir.DynamicForwardProxyListener`:
the DNS cache of the listener's dynamically forwarded routes (`dnsCacheConfig`; without it,
as `{}`, Envoy's defaults with IPv4 looked up first, as the established guide's
`dynamicForwardProxy: {}`) and their upstream connections (`circuitBreakers`,
`saveUpstreamAddress`, `sslConfig`: TLS to the proxied hosts, as an Upstream's, its SNI the
host of each request unless `sni` names one).

Each value is checked against Envoy's limits here, so that a bad one rejects the Gateway
with its field instead of Envoy refusing the listener. The resolver is c-ares (Envoy's
default; `caresDns` names its servers); `appleDns` exists only in Envoy's builds for Apple
platforms and is refused.
"""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.duration import optional_ms
from gw.api.dynamicforwardproxy import (
    CaresDnsResolverConfig,
    DnsCacheConfig,
    DynamicForwardProxyListener,
    ResolverSocketAddress,
)
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.gateway.circuitbreakers import build_circuit_breakers
from gw.translator.gateway.upstream_tls import build_ssl_config
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def build_listener_dynamic_forward_proxy(
    config: DynamicForwardProxyListener,
    field: str,
    *,
    owner: ResourceKey,
    refs: Refs,
    report: ResourceReport,
    now: float | None,
    secrets: list[ir.TlsSecret],
) -> ir.DynamicForwardProxyListener | None:
    """The listener's settings; the TLS secrets they use are added to `secrets`."""
    errors = len(report.errors)
    tls = None
    if config.ssl_config is not None:
        ssl = config.ssl_config
        tls, used = build_ssl_config(
            ssl,
            ssl.sni,
            f"{field}.sslConfig",
            referrer=owner,
            refs=refs,
            report=report,
            clock=Clock(now),  # a Gateway is built whole each time: nothing to record
        )
        secrets.extend(used)
    cache = _dns_cache(
        config.dns_cache_config or DnsCacheConfig(), f"{field}.dnsCacheConfig", report
    )
    if cache is None or len(report.errors) > errors:
        return None
    return ir.DynamicForwardProxyListener(
        dns_cache=cache,
        save_upstream_address=config.save_upstream_address,
        tls=tls,
        circuit_breakers=build_circuit_breakers(config.circuit_breakers),
    )


def _dns_cache(config: DnsCacheConfig, field: str, report: ResourceReport) -> ir.DnsCache | None:
    refresh = optional_ms(config.dns_refresh_rate)
    _at_least(refresh, 1, f"{field}.dnsRefreshRate", report)
    ttl = optional_ms(config.host_ttl)
    _at_least(ttl, 1, f"{field}.hostTtl", report)
    timeout = optional_ms(config.dns_query_timeout)
    _at_least(timeout, 1, f"{field}.dnsQueryTimeout", report)
    if config.max_hosts == 0:
        report.error(f"{field}.maxHosts", "maxHosts must be at least 1")
    base = maximum = None
    failure = config.dns_failure_refresh_rate
    if failure is not None:
        base, maximum = optional_ms(failure.base_interval), optional_ms(failure.max_interval)
        where = f"{field}.dnsFailureRefreshRate"
        if base is None:
            report.error(f"{where}.baseInterval", "required: the first wait after a failure")
        _at_least(base, 2, f"{where}.baseInterval", report)
        _at_least(maximum, max(base or 0, 2), f"{where}.maxInterval", report)
    if config.apple_dns is not None:
        report.error(
            f"{field}.appleDns",
            "not supported in gw: the Apple resolver exists only in Envoy's builds for Apple "
            "platforms; use caresDns, or neither",
        )
    cares = config.cares_dns or CaresDnsResolverConfig()
    if config.cares_dns is not None and not cares.resolvers:
        report.error(f"{field}.caresDns.resolvers", "name at least one DNS server")
    resolvers = []
    for i, address in enumerate(cares.resolvers):
        where = f"{field}.caresDns.resolvers[{i}]"
        if address.pipe is not None:
            report.error(
                f"{where}.pipe",
                "pipe is not supported: c-ares asks DNS servers at socket addresses; use "
                "socketAddress (address and portValue)",
            )
            continue
        if address.socket_address is None:
            report.error(where, "a DNS server is a socketAddress (address and portValue)")
            continue
        resolvers.append(_socket(address.socket_address, f"{where}.socketAddress", report))
    options = cares.dns_resolver_options
    breaker = config.dns_cache_circuit_breaker
    return ir.DnsCache(
        lookup_family=config.dns_lookup_family,
        refresh_rate_ms=refresh,
        host_ttl_ms=ttl,
        max_hosts=config.max_hosts,
        failure_refresh_base_ms=base,
        failure_refresh_max_ms=maximum,
        max_pending_lookups=breaker.max_pending_requests if breaker else None,
        resolvers=tuple(resolvers),
        use_tcp=bool(options and options.use_tcp_for_dns_lookups),
        no_default_search_domain=bool(options and options.no_default_search_domain),
        preresolve=tuple(
            _socket(a, f"{field}.preresolveHostnames[{i}]", report)
            for i, a in enumerate(config.preresolve_hostnames)
        ),
        query_timeout_ms=timeout,
    )


def _at_least(ms: int | None, least: int, field: str, report: ResourceReport) -> None:
    if ms is not None and ms < least:
        report.error(field, f"must be at least {least}ms, received {ms}ms")


def _socket(address: ResolverSocketAddress, field: str, report: ResourceReport) -> tuple[str, int]:
    if not address.address:
        report.error(f"{field}.address", "required: a host name or IP address")
    if address.named_port is not None or address.resolver_name is not None:
        report.error(
            field,
            "namedPort and resolverName are not supported in gw: Envoy resolves neither here; "
            "use portValue",
        )
    elif not address.port_value or address.port_value > 65535:
        report.error(f"{field}.portValue", f"a port from 1 to 65535, received {address.port_value}")
    return address.address, address.port_value or 0
