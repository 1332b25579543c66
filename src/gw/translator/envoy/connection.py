"""IR connection options → an Envoy cluster's HTTP protocol options (HTTP/1 or HTTP/2,
or the client's protocol; per-connection request limits, idle and stream timeouts), its
buffer limit, TCP keepalive, preconnect policy and the PROXY protocol transport socket."""

from __future__ import annotations

from typing import Literal

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import base_pb2, extension_pb2, protocol_pb2, proxy_protocol_pb2
from envoy.extensions.http.header_formatters.preserve_case.v3 import preserve_case_pb2
from envoy.extensions.transport_sockets.proxy_protocol.v3 import upstream_proxy_protocol_pb2
from envoy.extensions.transport_sockets.raw_buffer.v3 import raw_buffer_pb2
from envoy.extensions.upstreams.http.v3 import http_protocol_options_pb2 as http_options_pb2

from gw.translator import ir
from gw.translator.envoy.durations import duration_ms
from gw.translator.envoy.packing import pack

HTTP_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
PROXY_PROTOCOL_SOCKET = "envoy.transport_sockets.upstream_proxy_protocol"
RAW_BUFFER_SOCKET = "envoy.transport_sockets.raw_buffer"
PRESERVE_CASE = "envoy.http.stateful_header_formatters.preserve_case"

Options = http_options_pb2.HttpProtocolOptions


def add_connection(out: cluster_pb2.Cluster, cluster: ir.Cluster) -> None:
    connection = cluster.connection or ir.ConnectionOptions()
    if connection.buffer_limit_bytes is not None:
        out.per_connection_buffer_limit_bytes.value = connection.buffer_limit_bytes
    if connection.tcp_keepalive is not None:
        keepalive = out.upstream_connection_options.tcp_keepalive
        keepalive.SetInParent()
        if connection.tcp_keepalive.probes is not None:
            keepalive.keepalive_probes.value = connection.tcp_keepalive.probes
        if connection.tcp_keepalive.time_s is not None:
            keepalive.keepalive_time.value = connection.tcp_keepalive.time_s
        if connection.tcp_keepalive.interval_s is not None:
            keepalive.keepalive_interval.value = connection.tcp_keepalive.interval_s
    if cluster.preconnect is not None:
        policy = out.preconnect_policy
        if cluster.preconnect.per_upstream_ratio is not None:
            policy.per_upstream_preconnect_ratio.value = cluster.preconnect.per_upstream_ratio
        if cluster.preconnect.predictive_ratio is not None:
            policy.predictive_preconnect_ratio.value = cluster.preconnect.predictive_ratio
    options = build_http_options(cluster, connection)
    if options is not None:
        out.typed_extension_protocol_options[HTTP_OPTIONS].CopyFrom(pack(options))


def build_http_options(
    cluster: ir.Cluster, connection: ir.ConnectionOptions
) -> http_options_pb2.HttpProtocolOptions | None:
    """None when every HTTP setting is Envoy's default (HTTP/1.1, no limits)."""
    common = protocol_pb2.HttpProtocolOptions()
    if connection.max_requests_per_connection is not None:
        common.max_requests_per_connection.value = connection.max_requests_per_connection
    if connection.idle_timeout_ms is not None:
        common.idle_timeout.CopyFrom(duration_ms(connection.idle_timeout_ms))
    if connection.max_headers_count is not None:
        common.max_headers_count.value = connection.max_headers_count
    if connection.max_stream_duration_ms is not None:
        common.max_stream_duration.CopyFrom(duration_ms(connection.max_stream_duration_ms))
    http1 = _http1(connection.http1)
    http2 = _http2(cluster.http2_options)
    out = Options()
    if cluster.use_downstream_protocol:
        out.use_downstream_protocol_config.http_protocol_options.CopyFrom(http1)
        out.use_downstream_protocol_config.http2_protocol_options.CopyFrom(http2)
    elif cluster.http2:
        out.explicit_http_config.http2_protocol_options.CopyFrom(http2)
    elif common.ByteSize() or http1.ByteSize():
        out.explicit_http_config.http_protocol_options.CopyFrom(http1)
    else:
        return None
    if common.ByteSize():
        out.common_http_protocol_options.CopyFrom(common)
    return out


def _http1(options: ir.Http1Options | None) -> protocol_pb2.Http1ProtocolOptions:
    out = protocol_pb2.Http1ProtocolOptions()
    if options is None:
        return out
    out.enable_trailers = options.enable_trailers
    if options.header_case == "proper":
        out.header_key_format.proper_case_words.SetInParent()
    elif options.header_case == "preserve":
        out.header_key_format.stateful_formatter.CopyFrom(
            extension_pb2.TypedExtensionConfig(
                name=PRESERVE_CASE,
                typed_config=pack(preserve_case_pb2.PreserveCaseFormatterConfig()),
            )
        )
    if options.override_stream_error_on_invalid_http_message is not None:
        out.override_stream_error_on_invalid_http_message.value = (
            options.override_stream_error_on_invalid_http_message
        )
    return out


def _http2(options: ir.Http2Options | None) -> protocol_pb2.Http2ProtocolOptions:
    out = protocol_pb2.Http2ProtocolOptions()
    if options is None:
        return out
    if options.max_concurrent_streams is not None:
        out.max_concurrent_streams.value = options.max_concurrent_streams
    if options.initial_stream_window_size is not None:
        out.initial_stream_window_size.value = options.initial_stream_window_size
    if options.initial_connection_window_size is not None:
        out.initial_connection_window_size.value = options.initial_connection_window_size
    if options.override_stream_error_on_invalid_http_message is not None:
        out.override_stream_error_on_invalid_http_message.value = (
            options.override_stream_error_on_invalid_http_message
        )
    return out


def with_proxy_protocol(
    socket: base_pb2.TransportSocket | None, version: Literal["V1", "V2"] | None
) -> base_pb2.TransportSocket | None:
    """`socket` (plain text when None) behind a PROXY protocol header, when asked for."""
    if version is None:
        return socket
    inner = socket or base_pb2.TransportSocket(
        name=RAW_BUFFER_SOCKET, typed_config=pack(raw_buffer_pb2.RawBuffer())
    )
    config = upstream_proxy_protocol_pb2.ProxyProtocolUpstreamTransport(
        config=proxy_protocol_pb2.ProxyProtocolConfig(
            version=proxy_protocol_pb2.ProxyProtocolConfig.Version.Value(version)
        ),
        transport_socket=inner,
    )
    return base_pb2.TransportSocket(name=PROXY_PROTOCOL_SOCKET, typed_config=pack(config))
