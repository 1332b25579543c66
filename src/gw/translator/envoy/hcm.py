"""`ir.HttpSettings` → the HTTP connection manager of a listener's filter chain.

Besides the settings (whose defaults stage 1 applied), every manager gets two checks that
are not settings, because no virtual host's protection may be dodged through the `Host`
header:

- a trailing dot is stripped (`sec.test.` is `sec.test`);
- a `Host` with userinfo (`user@sec.test`) or a second `Host` header (Envoy joins the two
  with a comma) is answered `400 invalid Host header` before any filter or route sees it,
  instead of falling through to a `*` virtual host. An RBAC filter first in the chain
  denies them, and a local-reply mapper turns that denial (and the 404 of a listener
  without a `*` host) into the 400.

The early header mutation removes, before routing and every filter, the request headers
that gw's extauth server sets (`idTokenHeader`, `accessTokenHeader`), so that a client
cannot send its own copy to a route where extauth is off; with extauth on, the server's
copy is added after that.
"""

from __future__ import annotations

from collections.abc import Sequence

from envoy.config.accesslog.v3 import accesslog_pb2
from envoy.config.common.mutation_rules.v3 import mutation_rules_pb2
from envoy.config.core.v3 import address_pb2, base_pb2, extension_pb2, protocol_pb2
from envoy.config.rbac.v3 import rbac_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.filters.http.rbac.v3 import rbac_pb2 as rbac_filter_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.http.early_header_mutation.header_mutation.v3 import (
    header_mutation_pb2,
)
from envoy.extensions.http.header_formatters.preserve_case.v3 import preserve_case_pb2
from envoy.extensions.http.original_ip_detection.xff.v3 import xff_pb2
from envoy.extensions.request_id.uuid.v3 import uuid_pb2
from envoy.type.matcher.v3 import string_pb2
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.access_log import build_access_logs
from gw.translator.envoy.dynamicforwardproxy import sanitized_cluster_headers
from gw.translator.envoy.headers import header_option
from gw.translator.envoy.packing import duration, pack
from gw.translator.envoy.tracing import build_tracing

HCM = hcm_pb2.HttpConnectionManager
#: What a `Host` with userinfo holds, and what Envoy joins two `Host` headers with (a
#: substring search: cheaper on every request than a regular expression).
BAD_HOST_CHARACTERS = ("@", ",")
BAD_HOST_BODY = "invalid Host header"
_TIMEOUTS = (
    ("request_headers_timeout", "request_headers_timeout_ms"),
    ("stream_idle_timeout", "stream_idle_timeout_ms"),
    ("request_timeout", "request_timeout_ms"),
    ("drain_timeout", "drain_timeout_ms"),
    ("delayed_close_timeout", "delayed_close_timeout_ms"),
)
_COMMON_TIMEOUTS = (
    ("idle_timeout", "idle_timeout_ms"),
    ("max_connection_duration", "max_connection_duration_ms"),
    ("max_stream_duration", "max_stream_duration_ms"),
)


def build_manager(
    listener: ir.Listener,
    route_config_name: str,
    http_filters: Sequence[hcm_pb2.HttpFilter],
    server_headers: Sequence[str] = (),
    *,
    scoped: bool = False,
) -> hcm_pb2.HttpConnectionManager:
    """The manager of one filter chain; `server_headers` are the request headers gw's own
    servers set, which no client may send. `scoped`: routes come in shards chosen by the
    `Host` (`shards.py`) instead of from the route configuration `route_config_name`."""
    http = listener.http
    out = HCM(
        stat_prefix=listener.name.replace(":", "_"),
        codec_type=HCM.CodecType.Value(http.codec_type),
        http_filters=[host_check(), *http_filters],
        use_remote_address=wrappers_pb2.BoolValue(value=http.use_remote_address),
        xff_num_trusted_hops=http.xff_num_trusted_hops,
        skip_xff_append=http.skip_xff_append,
        append_x_forwarded_port=http.append_x_forwarded_port,
        via=http.via,
        preserve_external_request_id=http.preserve_external_request_id,
        server_name=http.server_name,
        server_header_transformation=HCM.ServerHeaderTransformation.Value(
            http.server_header_transformation
        ),
        proxy_100_continue=http.proxy_100_continue,
        normalize_path=wrappers_pb2.BoolValue(value=http.normalize_path),
        merge_slashes=http.merge_slashes,
        path_with_escaped_slashes_action=HCM.PathWithEscapedSlashesAction.Value(
            http.path_with_escaped_slashes_action
        ),
        strip_trailing_host_dot=True,
        local_reply_config=_bad_host_reply(),
        upgrade_configs=[HCM.UpgradeConfig(upgrade_type=u) for u in http.upgrades],
        common_http_protocol_options=_common_options(http),
    )
    if scoped:
        out.scoped_routes.CopyFrom(_scoped_routes(route_config_name))
    else:
        out.rds.CopyFrom(
            hcm_pb2.Rds(
                config_source=names.ads_config_source(), route_config_name=route_config_name
            )
        )
    for field, attribute in _TIMEOUTS:
        if (ms := getattr(http, attribute)) is not None:
            getattr(out, field).CopyFrom(duration(ms))
    if http.strip_any_host_port:
        out.strip_any_host_port = True
    _add_request_ids(out, http)
    _add_addresses(out, http)
    _add_protocols(out, http)
    removed = sorted(
        {*http.early_headers_to_remove, *server_headers, *sanitized_cluster_headers(listener)}
    )
    if removed or http.early_headers_to_add:
        out.early_header_mutation_extensions.append(_early_mutation(removed, http))
    if http.tracing is not None:
        out.tracing.CopyFrom(build_tracing(http.tracing))
    out.access_log.extend(build_access_logs(listener.options.access_logs))
    if http.leftmost_xff:
        _trust_every_forwarder(out)
    return out


def _scoped_routes(name: str) -> hcm_pb2.ScopedRoutes:
    """Scopes keyed by the `Host` without its port, and the shards they name, over ADS."""
    builder = hcm_pb2.ScopedRoutes.ScopeKeyBuilder
    host = builder.FragmentBuilder.HeaderValueExtractor(
        name=":authority", element_separator=":", index=0
    )
    return hcm_pb2.ScopedRoutes(
        name=name,
        scope_key_builder=builder(fragments=[builder.FragmentBuilder(header_value_extractor=host)]),
        rds_config_source=names.ads_config_source(),
        scoped_rds=hcm_pb2.ScopedRds(scoped_rds_config_source=names.ads_config_source()),
    )


def host_check() -> hcm_pb2.HttpFilter:
    """Denies a request whose `Host` has userinfo or was sent twice (see the module)."""
    deny = rbac_pb2.RBAC(
        action=rbac_pb2.RBAC.DENY,
        policies={
            "bad-host": rbac_pb2.Policy(  # permissions match when any one does
                permissions=[rbac_pb2.Permission(header=m) for m in _bad_host_matchers()],
                principals=[rbac_pb2.Principal(any=True)],
            )
        },
    )
    return hcm_pb2.HttpFilter(
        name=names.HOST_CHECK,
        typed_config=pack(rbac_filter_pb2.RBAC(rules=deny, rules_stat_prefix="host_check_")),
    )


def _bad_host_matchers() -> list[rc_pb2.HeaderMatcher]:
    return [
        rc_pb2.HeaderMatcher(name=":authority", string_match=string_pb2.StringMatcher(contains=c))
        for c in BAD_HOST_CHARACTERS
    ]


def _bad_host_reply() -> hcm_pb2.LocalReplyConfig:
    either = accesslog_pb2.OrFilter(
        filters=[
            accesslog_pb2.AccessLogFilter(header_filter=accesslog_pb2.HeaderFilter(header=m))
            for m in _bad_host_matchers()
        ]
    )
    return hcm_pb2.LocalReplyConfig(
        mappers=[
            hcm_pb2.ResponseMapper(
                filter=accesslog_pb2.AccessLogFilter(or_filter=either),
                status_code=wrappers_pb2.UInt32Value(value=400),
                body=base_pb2.DataSource(inline_string=BAD_HOST_BODY),
            )
        ]
    )


def _common_options(http: ir.HttpSettings) -> protocol_pb2.HttpProtocolOptions:
    out = protocol_pb2.HttpProtocolOptions(
        headers_with_underscores_action=protocol_pb2.HttpProtocolOptions.HeadersWithUnderscoresAction.Value(
            http.headers_with_underscores_action
        )
    )
    for field, attribute in _COMMON_TIMEOUTS:
        if (ms := getattr(http, attribute)) is not None:
            getattr(out, field).CopyFrom(duration(ms))
    for field in ("max_headers_count", "max_requests_per_connection"):
        if (value := getattr(http, field)) is not None:
            getattr(out, field).CopyFrom(wrappers_pb2.UInt32Value(value=value))
    return out


def _add_request_ids(out: hcm_pb2.HttpConnectionManager, http: ir.HttpSettings) -> None:
    if http.generate_request_id is not None:
        out.generate_request_id.CopyFrom(wrappers_pb2.BoolValue(value=http.generate_request_id))
    if http.pack_trace_reason is None and http.use_request_id_for_trace_sampling is None:
        return
    uuid = uuid_pb2.UuidRequestIdConfig()
    if http.pack_trace_reason is not None:
        uuid.pack_trace_reason.CopyFrom(wrappers_pb2.BoolValue(value=http.pack_trace_reason))
    if http.use_request_id_for_trace_sampling is not None:
        uuid.use_request_id_for_trace_sampling.CopyFrom(
            wrappers_pb2.BoolValue(value=http.use_request_id_for_trace_sampling)
        )
    out.request_id_extension.CopyFrom(hcm_pb2.RequestIDExtension(typed_config=pack(uuid)))


def _add_addresses(out: hcm_pb2.HttpConnectionManager, http: ir.HttpSettings) -> None:
    if http.internal_cidr_ranges or http.internal_unix_sockets:
        out.internal_address_config.CopyFrom(
            HCM.InternalAddressConfig(
                unix_sockets=http.internal_unix_sockets,
                cidr_ranges=[
                    address_pb2.CidrRange(
                        address_prefix=prefix, prefix_len=wrappers_pb2.UInt32Value(value=length)
                    )
                    for prefix, length in http.internal_cidr_ranges
                ],
            )
        )
    if http.forward_client_cert_details is not None:
        out.forward_client_cert_details = HCM.ForwardClientCertDetails.Value(
            http.forward_client_cert_details
        )
    if http.client_cert_details:
        details = HCM.SetCurrentClientCertDetails(
            **{p: True for p in http.client_cert_details if p != "subject"}
        )
        if "subject" in http.client_cert_details:
            details.subject.CopyFrom(wrappers_pb2.BoolValue(value=True))
        out.set_current_client_cert_details.CopyFrom(details)


def _add_protocols(out: hcm_pb2.HttpConnectionManager, http: ir.HttpSettings) -> None:
    """HTTP/1 options (old clients, chunked length, trailers, header case) and HTTP/2's."""
    if http.max_request_headers_kb is not None:
        out.max_request_headers_kb.CopyFrom(
            wrappers_pb2.UInt32Value(value=http.max_request_headers_kb)
        )
    http1 = protocol_pb2.Http1ProtocolOptions(
        accept_http_10=http.accept_http_10,
        default_host_for_http_10=http.default_host_for_http_10,
        allow_chunked_length=http.allow_chunked_length,
        enable_trailers=http.enable_trailers,
        allow_custom_methods=http.allow_custom_methods,
    )
    key_format = protocol_pb2.Http1ProtocolOptions.HeaderKeyFormat
    if http.header_key_format == "proper_case":
        http1.header_key_format.CopyFrom(key_format(proper_case_words=key_format.ProperCaseWords()))
    elif http.header_key_format == "preserve_case":
        http1.header_key_format.CopyFrom(
            key_format(
                stateful_formatter=extension_pb2.TypedExtensionConfig(
                    name=names.PRESERVE_CASE,
                    typed_config=pack(preserve_case_pb2.PreserveCaseFormatterConfig()),
                )
            )
        )
    if http1 != protocol_pb2.Http1ProtocolOptions():
        out.http_protocol_options.CopyFrom(http1)
    if http.http2 is not None:
        http2 = protocol_pb2.Http2ProtocolOptions()
        for field in (
            "max_concurrent_streams",
            "initial_stream_window_size",
            "initial_connection_window_size",
        ):
            if (value := getattr(http.http2, field)) is not None:
                getattr(http2, field).CopyFrom(wrappers_pb2.UInt32Value(value=value))
        override = http.http2.override_stream_error_on_invalid_http_message
        if override is not None:
            http2.override_stream_error_on_invalid_http_message.CopyFrom(
                wrappers_pb2.BoolValue(value=override)
            )
        out.http2_protocol_options.CopyFrom(http2)


def _early_mutation(
    removed: Sequence[str], http: ir.HttpSettings
) -> extension_pb2.TypedExtensionConfig:
    mutations = [mutation_rules_pb2.HeaderMutation(remove=name) for name in removed]
    mutations += [
        mutation_rules_pb2.HeaderMutation(append=header_option(h))
        for h in http.early_headers_to_add
    ]
    return extension_pb2.TypedExtensionConfig(
        name=names.EARLY_HEADER_MUTATION,
        typed_config=pack(header_mutation_pb2.HeaderMutation(mutations=mutations)),
    )


def _trust_every_forwarder(out: hcm_pb2.HttpConnectionManager) -> None:
    """`leftmostXffAddress`: with every address of `X-Forwarded-For` trusted, Envoy's XFF
    detection takes the leftmost one as the client (the TCP peer without the header).
    Detection extensions replace `use_remote_address` and `xff_num_trusted_hops`."""
    out.use_remote_address.CopyFrom(wrappers_pb2.BoolValue(value=False))
    out.xff_num_trusted_hops = 0
    everyone = [
        address_pb2.CidrRange(address_prefix=prefix, prefix_len=wrappers_pb2.UInt32Value(value=0))
        for prefix in ("0.0.0.0", "::")
    ]
    config = xff_pb2.XffConfig(xff_trusted_cidrs=xff_pb2.XffTrustedCidrs(cidrs=everyone))
    out.original_ip_detection_extensions.append(
        extension_pb2.TypedExtensionConfig(name=names.XFF_ORIGINAL_IP, typed_config=pack(config))
    )
