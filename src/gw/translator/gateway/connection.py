"""How Envoy connects to an Upstream's hosts → the connection fields of `ir.Cluster`:
`connectionConfig` (connect timeout, TCP keepalive, per-connection request and buffer
limits, HTTP/1 and common HTTP options), the HTTP/2 settings (`useHttp2`,
`protocolSelection`, window sizes, stream limits), `preconnectPolicy`, the PROXY protocol
and the DNS settings of host-name clusters.

Settings that cannot apply (HTTP/2 windows on an HTTP/1 upstream, a DNS refresh rate on a
cluster without host names) are reported with the reason, never dropped silently.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Literal

from gw.api.connection import ConnectionConfig, Http1ProtocolOptions, PreconnectPolicy, TcpKeepAlive
from gw.api.duration import optional_ms
from gw.api.upstream import UpstreamSpec
from gw.translator import ir
from gw.translator.reports import ResourceReport

#: Envoy's bounds on HTTP/2 settings.
MAX_STREAMS = 2**31 - 1
MIN_WINDOW, MAX_WINDOW = 65_535, 2**31 - 1
DEFAULT_CONNECT_TIMEOUT_MS = 5000


#: What is compared with to tell that nothing is set (made once, not per call).
_NO_CONNECTION_OPTIONS = ir.ConnectionOptions()


def with_connection(
    cluster: ir.Cluster, spec: UpstreamSpec, report: ResourceReport, *, http2: bool
) -> ir.Cluster:
    """`cluster` with the upstream's connection settings; `http2` when something else (a
    gRPC service spec) already demands HTTP/2."""
    config = spec.connection_config or ConnectionConfig()
    field = "spec.connectionConfig"
    timeout = optional_ms(config.connect_timeout)
    if timeout == 0:
        report.error(f"{field}.connectTimeout", "connectTimeout must be above 0")
    http2 = http2 or bool(spec.use_http2)
    downstream = spec.protocol_selection == "USE_DOWNSTREAM_PROTOCOL"
    options = ir.ConnectionOptions(
        max_requests_per_connection=config.max_requests_per_connection or None,
        buffer_limit_bytes=config.per_connection_buffer_limit_bytes,
        tcp_keepalive=_keepalive(config.tcp_keepalive),
        http1=_http1(config.http1_protocol_options, f"{field}.http1ProtocolOptions", report),
    )
    common = config.common_http_protocol_options
    if common is not None:
        where = f"{field}.commonHttpProtocolOptions"
        if optional_ms(common.max_stream_duration) == 0:
            report.error(f"{where}.maxStreamDuration", "maxStreamDuration must be above 0")
        options = replace(
            options,
            idle_timeout_ms=optional_ms(common.idle_timeout),
            max_headers_count=common.max_headers_count or None,
            max_stream_duration_ms=optional_ms(common.max_stream_duration),
        )
        if common.headers_with_underscores_action != "ALLOW":
            report.warning(
                f"{where}.headersWithUnderscoresAction",
                "no effect: Envoy applies it to client requests only, never on connections to "
                "upstreams; set it on the listener's HTTP connection manager",
            )
    if options.http1 is not None and http2 and not downstream:
        report.warning(
            f"{field}.http1ProtocolOptions",
            "applies to HTTP/1 connections only, and this upstream is spoken to over HTTP/2 "
            "(useHttp2)",
        )
    return replace(
        cluster,
        connect_timeout_ms=timeout or DEFAULT_CONNECT_TIMEOUT_MS,
        connection=None if options == _NO_CONNECTION_OPTIONS else options,
        http2=http2,
        use_downstream_protocol=downstream or None,
        http2_options=_http2(spec, report, applies=http2 or downstream),
        preconnect=_preconnect(spec.preconnect_policy, "spec.preconnectPolicy", report),
        proxy_protocol=_proxy_protocol(spec.proxy_protocol_version, report),
        ignore_health_on_host_removal=spec.ignore_health_on_host_removal or None,
    )


def with_dns(cluster: ir.Cluster, spec: UpstreamSpec, report: ResourceReport) -> ir.Cluster:
    """`respectDnsTtl` and `dnsRefreshRate`, for clusters whose hosts Envoy resolves."""
    rate = optional_ms(spec.dns_refresh_rate)
    if rate is not None and cluster.discovery != "dns":
        found = "EDS" if cluster.discovery == "eds" else "STATIC"
        report.error(
            "spec.dnsRefreshRate",
            f"DnsRefreshRate is only valid with STRICT_DNS or LOGICAL_DNS cluster type, found "
            f"{found}: Envoy resolves names only for static hosts given by name",
        )
        return cluster
    if rate == 0:
        report.error("spec.dnsRefreshRate", "dnsRefreshRate must be at least 1ms")
        return cluster
    if spec.respect_dns_ttl and cluster.discovery != "dns":
        report.warning(
            "spec.respectDnsTtl",
            "applies to hosts given by name only, and this upstream has none",
        )
        return cluster
    if rate is None and not spec.respect_dns_ttl:
        return cluster
    return replace(
        cluster, dns=ir.DnsOptions(respect_ttl=bool(spec.respect_dns_ttl), refresh_rate_ms=rate)
    )


def _keepalive(config: TcpKeepAlive | None) -> ir.TcpKeepalive | None:
    """Seconds, rounded up (the kernel counts whole seconds)."""
    if config is None:
        return None

    def seconds(text: str | None) -> int | None:
        ms = optional_ms(text)
        return None if ms is None else max(1, math.ceil(ms / 1000))

    return ir.TcpKeepalive(
        probes=config.keepalive_probes or None,
        time_s=seconds(config.keepalive_time),
        interval_s=seconds(config.keepalive_interval),
    )


def _http1(
    config: Http1ProtocolOptions | None, field: str, report: ResourceReport
) -> ir.Http1Options | None:
    if config is None:
        return None
    if config.proper_case_header_key_format and config.preserve_case_header_key_format:
        report.error(
            field,
            "set one of properCaseHeaderKeyFormat and preserveCaseHeaderKeyFormat, not both",
        )
    case: Literal["proper", "preserve"] | None = None
    if config.proper_case_header_key_format:
        case = "proper"
    elif config.preserve_case_header_key_format:
        case = "preserve"
    return ir.Http1Options(
        enable_trailers=config.enable_trailers,
        header_case=case,
        override_stream_error_on_invalid_http_message=(
            config.override_stream_error_on_invalid_http_message
        ),
    )


def _http2(spec: UpstreamSpec, report: ResourceReport, *, applies: bool) -> ir.Http2Options | None:
    options = ir.Http2Options(
        max_concurrent_streams=spec.max_concurrent_streams,
        initial_stream_window_size=spec.initial_stream_window_size,
        initial_connection_window_size=spec.initial_connection_window_size,
        override_stream_error_on_invalid_http_message=(
            spec.override_stream_error_on_invalid_http_message
        ),
    )
    if options == ir.Http2Options():
        return None
    if (
        spec.max_concurrent_streams is not None
        and not 1 <= spec.max_concurrent_streams <= MAX_STREAMS
    ):
        report.error(
            "spec.maxConcurrentStreams",
            f"{spec.max_concurrent_streams} is not between 1 and {MAX_STREAMS}",
        )
    for name, size in (
        ("initialStreamWindowSize", spec.initial_stream_window_size),
        ("initialConnectionWindowSize", spec.initial_connection_window_size),
    ):
        if size is not None and not MIN_WINDOW <= size <= MAX_WINDOW:
            report.error(f"spec.{name}", f"{size} is not between {MIN_WINDOW} and {MAX_WINDOW}")
    if not applies:
        for name, value in (
            ("maxConcurrentStreams", spec.max_concurrent_streams),
            ("initialStreamWindowSize", spec.initial_stream_window_size),
            ("initialConnectionWindowSize", spec.initial_connection_window_size),
            (
                "overrideStreamErrorOnInvalidHttpMessage",
                spec.override_stream_error_on_invalid_http_message,
            ),
        ):
            if value is not None:
                report.warning(
                    f"spec.{name}",
                    "applies to HTTP/2 connections only, and this upstream is spoken to over "
                    "HTTP/1: set useHttp2: true",
                )
        return None
    return options


def _preconnect(
    policy: PreconnectPolicy | None, field: str, report: ResourceReport
) -> ir.Preconnect | None:
    if policy is None:
        return None
    for name, ratio in (
        ("perUpstreamPreconnectRatio", policy.per_upstream_preconnect_ratio),
        ("predictivePreconnectRatio", policy.predictive_preconnect_ratio),
    ):
        if ratio is not None and not 1 <= ratio <= 3:
            report.error(f"{field}.{name}", f"{ratio} is not between 1 and 3")
    return ir.Preconnect(
        per_upstream_ratio=policy.per_upstream_preconnect_ratio,
        predictive_ratio=policy.predictive_preconnect_ratio,
    )


def _proxy_protocol(version: str | None, report: ResourceReport) -> Literal["V1", "V2"] | None:
    if version is None:
        return None
    if version not in ("V1", "V2"):
        report.error(
            "spec.proxyProtocolVersion", f"{version!r} is not a PROXY protocol version: V1 or V2"
        )
        return None
    return "V1" if version == "V1" else "V2"
