"""`tcpGateway` → `ir.TcpListener`: TCP hosts, each a filter chain of its listener.

A host is plain (no `sslConfig`: any connection), TLS passed through (`sslConfig` with
`sniDomains` and no secret: the upstream terminates TLS and the client sees its
certificate), or TLS terminated (`sslConfig.secretRef`, chosen by `sniDomains` or, without
them, for any SNI), as the established gateway does. Its destination is one upstream or
service, several by weight, an UpstreamGroup, or the cluster the client's SNI names
(`forwardSniClusterName`). A destination that does not exist only warns (`TcpHost Warning:
InvalidDestinationWarning`), and the host closes its connections until it exists.

Everything Envoy would refuse is reported here instead: two hosts taking the same
connections (the same SNI name, or both any connection), a bad secret, an empty gateway,
settings out of Envoy's range.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from gw.api import ResourceKey
from gw.api.tcp import TcpGateway, TcpHost, TcpListenerOptions, TcpProxySettings
from gw.api.tls import SslConfig
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.gateway.hcm import checked_ms
from gw.translator.gateway.headers import HeaderSecrets, headers_to_add
from gw.translator.gateway.listener_options import build_connection_limit
from gw.translator.gateway.ratelimit import local_limit
from gw.translator.gateway.tcp_destinations import tcp_destination
from gw.translator.gateway.tls import ANY_SNI, build_termination, sni_names
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

#: Why TLS settings cannot apply to a host that passes TLS through.
PASSTHROUGH = (
    "without secretRef: the host passes TLS through to the upstream, which terminates it; "
    "remove it or add secretRef"
)
#: What a TCP gateway adds to the Proxy besides its listener: TLS secrets, the clusters of
#: services its hosts address directly.
Extras = tuple[tuple[ir.TlsSecret, ...], tuple[ir.Cluster, ...]]


@dataclasses.dataclass(slots=True)
class TcpContext:
    """Where a TCP gateway is (`field` of `owner`) and what building it reads."""

    owner: ResourceKey
    field: str
    snapshot: Snapshot
    refs: Refs
    report: ResourceReport
    now: float | None
    secrets: list[ir.TlsSecret] = dataclasses.field(default_factory=list)
    clusters: dict[str, ir.Cluster] = dataclasses.field(default_factory=dict)


def build_tcp_listener(
    gateway: TcpGateway, context: TcpContext, default_names: Sequence[str] = ()
) -> ir.TcpListener | None:
    """The TCP part of a listener, or None after reporting errors. `default_names`: the SNI
    names of a hybrid gateway's matcher, for the hosts that name none themselves."""
    report, field = context.report, context.field
    errors = len(report.errors)
    if not gateway.tcp_hosts:
        report.error(
            f"{field}.tcpHosts",
            "a tcpGateway needs at least one tcpHost: a listener without one takes no connection",
        )
    hosts = [
        _host(host, f"{field}.tcpHosts[{i}]", context, tuple(default_names))
        for i, host in enumerate(gateway.tcp_hosts)
    ]
    _check_names(gateway.tcp_hosts, field, report)
    _check_claims(hosts, field, report)
    options = gateway.options or TcpListenerOptions()
    where = f"{field}.options"
    settings = _settings(
        options.tcp_proxy_settings,
        f"{where}.tcpProxySettings",
        report,
        HeaderSecrets(context.refs, context.owner),
    )
    limit = options.connection_limit
    local = options.local_ratelimit
    built = ir.TcpListener(
        hosts=tuple(h for h in hosts if h is not None),
        settings=settings,
        connection_limit=(
            build_connection_limit(limit, report, f"{where}.connectionLimit") if limit else None
        ),
        local_ratelimit=(local_limit(local, f"{where}.localRatelimit", report) if local else None),
    )
    return built if len(report.errors) == errors else None


def host_claims(host: ir.TcpHost) -> tuple[str, ...]:
    """The SNI names whose connections a host takes (`*`: any)."""
    return host.server_names or (ANY_SNI,)


def _host(
    host: TcpHost, field: str, context: TcpContext, default_names: tuple[str, ...]
) -> ir.TcpHost | None:
    report = context.report
    errors = len(report.errors)
    name = host.name or "(unnamed)"
    clusters: tuple[ir.WeightedCluster, ...] = ()
    forward_sni = False
    if host.destination is None:
        report.error(
            f"{field}.destination", f"no destination type was specified for tcp host {name}"
        )
    else:
        found = tcp_destination(host.destination, f"{field}.destination", context)
        if found is not None:
            clusters, forward_sni = found, host.destination.forward_sni_cluster_name is not None
    tls, names = _tls(host.ssl_config, f"{field}.sslConfig", context, default_names)
    if len(report.errors) > errors:
        return None
    return ir.TcpHost(
        name=host.name, clusters=clusters, forward_sni=forward_sni, tls=tls, server_names=names
    )


def _tls(
    ssl: SslConfig | None, field: str, context: TcpContext, default_names: tuple[str, ...]
) -> tuple[ir.TlsTermination | None, tuple[str, ...]]:
    """(TLS termination or None, the SNI names selecting the host)."""
    report = context.report
    if ssl is None:
        return None, default_names
    own = sni_names(ssl.sni_domains, f"{field}.sniDomains", report)
    if default_names and own:
        outside = [n for n in own if n not in default_names]
        if outside:
            report.error(
                f"{field}.sniDomains",
                f"gateway has conflicting sni domains [{' '.join(outside)}]: the matcher's "
                f"sslConfig.sniDomains [{' '.join(default_names)}] do not include them",
            )
    names = own or default_names
    if ssl.secret_ref is None and ssl.ssl_files is None:
        if not ssl.sni_domains:
            report.error(
                field,
                "sslConfig needs secretRef (to terminate TLS) or sniDomains (to pass TLS "
                "through to the upstream)",
            )
        else:
            refuse_tls_fields(ssl, field, report, PASSTHROUGH)
        return None, names
    built = build_termination(
        ssl, context.owner, (), context.snapshot, context.refs, report, Clock(context.now), field
    )
    if built is None:
        return None, names
    termination, secret = built
    context.secrets.append(secret)
    return dataclasses.replace(termination, server_names=names), names


def refuse_tls_fields(ssl: SslConfig, field: str, report: ResourceReport, why: str) -> None:
    """Every field of `ssl` but `sniDomains`, refused for `why` (they cannot apply)."""
    data = ssl.model_dump(by_alias=True, exclude_defaults=True)
    for name in sorted(set(data) - {"sniDomains"}):
        report.error(f"{field}.{name}", f"{name} has no effect {why}")


def _check_names(hosts: list[TcpHost], field: str, report: ResourceReport) -> None:
    seen: dict[str, int] = {}
    for i, host in enumerate(hosts):
        if not host.name:
            report.error(f"{field}.tcpHosts[{i}].name", "a tcp host needs a name")
        elif host.name in seen:
            report.error(
                f"{field}.tcpHosts[{i}].name",
                f"tcp host name {host.name} is also the name of tcpHosts[{seen[host.name]}]: "
                "names must be unique within a gateway",
            )
        else:
            seen[host.name] = i


def _check_claims(hosts: list[ir.TcpHost | None], field: str, report: ResourceReport) -> None:
    """Two hosts may not take the same connections (Envoy refuses such filter chains)."""
    claimed: dict[str, int] = {}
    for i, host in enumerate(hosts):
        if host is None:
            continue
        for name in host_claims(host):
            if name in claimed:
                what = "every connection" if name == ANY_SNI else f"the SNI name {name}"
                report.error(
                    f"{field}.tcpHosts[{i}]",
                    f"tcpHosts[{claimed[name]}] already takes {what}: give each host its own "
                    "sslConfig.sniDomains",
                )
            else:
                claimed[name] = i


def _settings(
    settings: TcpProxySettings | None,
    field: str,
    report: ResourceReport,
    secrets: HeaderSecrets,
) -> ir.TcpProxySettings:
    if settings is None:
        return ir.TcpProxySettings()
    attempts = settings.max_connect_attempts
    if attempts is not None and attempts < 1:
        report.error(f"{field}.maxConnectAttempts", "must be at least 1")
    idle = settings.idle_timeout
    flush = settings.access_log_flush_interval
    flush_ms = checked_ms(flush, f"{field}.accessLogFlushInterval", report) if flush else None
    if flush_ms is not None and flush_ms < 1:
        report.error(
            f"{field}.accessLogFlushInterval", "access log flush interval must have minimum of 1ms"
        )
    elif flush_ms is not None:
        report.warning(
            f"{field}.accessLogFlushInterval",
            "no effect yet: gw writes no access log for TCP connections (the interval is set "
            "on Envoy's TCP proxy, for when it does)",
        )
    tunnel = None
    if (config := settings.tunneling_config) is not None:
        where = f"{field}.tunnelingConfig"
        if not config.hostname:
            report.error(f"{where}.hostname", "the host name to send in CONNECT is required")
        headers = headers_to_add(config.headers_to_add, f"{where}.headersToAdd", report, secrets)
        tunnel = ir.TcpTunnel(hostname=config.hostname, headers=headers)
    return ir.TcpProxySettings(
        max_connect_attempts=attempts,
        idle_timeout_ms=checked_ms(idle, f"{field}.idleTimeout", report) if idle else None,
        access_log_flush_interval_ms=flush_ms,
        tunnel=tunnel,
    )
