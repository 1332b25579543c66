"""`httpConnectionManagerSettings` → `ir.HttpSettings`: how a listener speaks HTTP.

What the Gateway leaves unset keeps gw's defaults (`ir.HttpSettings`), which are stricter
than Envoy's and the established gateway's where it matters at the edge: the TCP peer is
the client (`useRemoteAddress: true`, so a client cannot choose its address with
`X-Forwarded-For`), headers must arrive within 10 s, a silent stream or connection is
closed after 60 s, paths are normalised and headers with underscores dropped. Every value
is checked here against Envoy's limits, so that a bad one is a status on the Gateway and
never a listener Envoy refuses.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from pydantic.alias_generators import to_camel

from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.hcm import HttpConnectionManagerSettings
from gw.api.upgrades import ProtocolUpgradeConfig
from gw.translator import ir
from gw.translator.gateway.headers import (
    HeaderSecrets,
    headers_to_add,
    headers_to_remove,
    line_break_problem,
)
from gw.translator.gateway.tracing import build_tracing
from gw.translator.ir.hcm import UpgradeType
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options.httpConnectionManagerSettings"
_TIMEOUTS = (
    "request_headers_timeout",
    "stream_idle_timeout",
    "idle_timeout",
    "request_timeout",
    "drain_timeout",
    "delayed_close_timeout",
    "max_connection_duration",
    "max_stream_duration",
)
_PLAIN = (
    "use_remote_address",
    "xff_num_trusted_hops",
    "skip_xff_append",
    "append_x_forwarded_port",
    "generate_request_id",
    "preserve_external_request_id",
    "server_header_transformation",
    "proxy_100_continue",
    "codec_type",
    "max_requests_per_connection",
    "normalize_path",
    "merge_slashes",
    "path_with_escaped_slashes_action",
    "strip_any_host_port",
    "accept_http_10",
    "allow_chunked_length",
    "enable_trailers",
    "forward_client_cert_details",
)
#: The longest duration protobuf (and so Envoy) can hold: 10000 years.
MAX_DURATION_MS = 315_576_000_000_000
#: HTTP/2 window sizes Envoy accepts (RFC 9113 allows no less than the initial 65535).
_WINDOW = (65_535, 2**31 - 1)


def build_http_settings(
    settings: HttpConnectionManagerSettings | None,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> ir.HttpSettings | None:
    """The listener's HTTP settings with gw's defaults, or None after reporting errors."""
    if settings is None:
        return ir.HttpSettings()
    errors = len(report.errors)
    values: dict[str, Any] = {
        name: getattr(settings, name) for name in _PLAIN if getattr(settings, name) is not None
    }
    for name in _TIMEOUTS:
        if (text := getattr(settings, name)) is not None:
            values[f"{name}_ms"] = checked_ms(text, f"{FIELD}.{to_camel(name)}", report)
    if settings.headers_with_underscores_action == "REJECT_CLIENT_REQUEST":
        values["headers_with_underscores_action"] = "REJECT_REQUEST"
    elif settings.headers_with_underscores_action is not None:
        values["headers_with_underscores_action"] = settings.headers_with_underscores_action
    values |= _texts(settings, report)
    values |= _limits(settings, report)
    values |= _addresses(settings, report)
    values |= _protocol(settings, report)
    values |= _early_headers(settings, HeaderSecrets(refs, owner), report)
    if settings.tracing is not None:
        values["tracing"] = build_tracing(settings.tracing, refs, owner, report, f"{FIELD}.tracing")
    if len(report.errors) > errors:
        return None
    return ir.HttpSettings(**values)


def checked_ms(text: str, field: str, report: ResourceReport) -> int:
    """The milliseconds of a parsed duration, reporting one longer than Envoy can hold."""
    ms = int(duration_ms(text))
    if ms > MAX_DURATION_MS:
        report.error(field, f"{text} is longer than 10000 years, the longest Envoy takes")
    return min(ms, MAX_DURATION_MS)


def _texts(settings: HttpConnectionManagerSettings, report: ResourceReport) -> dict[str, Any]:
    """`via`, `serverName`, `defaultHostForHttp10`: header values, so no line breaks."""
    out: dict[str, Any] = {}
    for name, camel in (
        ("via", "via"),
        ("server_name", "serverName"),
        ("default_host_for_http_10", "defaultHostForHttp10"),
    ):
        text = getattr(settings, name)
        if text is None:
            continue
        if (problem := line_break_problem(text)) is not None:
            report.error(f"{FIELD}.{camel}", problem)
        out[name] = text
    if settings.default_host_for_http_10 and not settings.accept_http_10:
        report.error(
            f"{FIELD}.defaultHostForHttp10",
            "is the Host of HTTP/1.0 requests, which are refused unless acceptHttp10 is true; "
            "set both",
        )
    return out


def _limits(settings: HttpConnectionManagerSettings, report: ResourceReport) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kb = settings.max_request_headers_kb
    if kb is not None:
        if not 1 <= kb <= 8192:
            report.error(
                f"{FIELD}.maxRequestHeadersKb", f"{kb} is not between 1 and 8192 (Envoy's limits)"
            )
        out["max_request_headers_kb"] = kb
    count = settings.max_headers_count
    if count is not None:
        if count < 1:
            report.error(f"{FIELD}.maxHeadersCount", "must be at least 1")
        out["max_headers_count"] = count
    return out


def _addresses(settings: HttpConnectionManagerSettings, report: ResourceReport) -> dict[str, Any]:
    """`internalAddressConfig`: CIDR ranges checked as networks."""
    config = settings.internal_address_config
    if config is None:
        return {}
    ranges = []
    for i, cidr in enumerate(config.cidr_ranges):
        length = cidr.prefix_len or 0
        try:
            network = ipaddress.ip_network(f"{cidr.address_prefix}/{length}", strict=False)
        except ValueError as e:
            report.error(f"{FIELD}.internalAddressConfig.cidrRanges[{i}]", str(e))
            continue
        ranges.append((str(network.network_address), network.prefixlen))
    return {
        "internal_cidr_ranges": tuple(ranges),
        "internal_unix_sockets": bool(config.unix_sockets),
    }


def _protocol(settings: HttpConnectionManagerSettings, report: ResourceReport) -> dict[str, Any]:
    """Header case, client certificate details, request ids, upgrades, HTTP/2 options."""
    out: dict[str, Any] = {}
    if settings.proper_case_header_key_format and settings.preserve_case_header_key_format:
        report.error(
            f"{FIELD}.preserveCaseHeaderKeyFormat",
            "set only one of properCaseHeaderKeyFormat and preserveCaseHeaderKeyFormat",
        )
    elif settings.proper_case_header_key_format:
        out["header_key_format"] = "proper_case"
    elif settings.preserve_case_header_key_format:
        out["header_key_format"] = "preserve_case"
    details = settings.set_current_client_cert_details
    if details is not None:
        parts = ("subject", "cert", "chain", "dns", "uri")
        out["client_cert_details"] = tuple(p for p in parts if getattr(details, p))
    uuid = settings.uuid_request_id_config
    if uuid is not None:
        out["pack_trace_reason"] = uuid.pack_trace_reason
        out["use_request_id_for_trace_sampling"] = uuid.use_request_id_for_trace_sampling
    if settings.upgrades is not None:
        out["upgrades"] = _upgrades(settings.upgrades, report)
    http2 = settings.http2_protocol_options
    if http2 is not None:
        where = f"{FIELD}.http2ProtocolOptions"
        for name, camel in (
            ("initial_stream_window_size", "initialStreamWindowSize"),
            ("initial_connection_window_size", "initialConnectionWindowSize"),
        ):
            size = getattr(http2, name)
            if size is not None and not _WINDOW[0] <= size <= _WINDOW[1]:
                report.error(f"{where}.{camel}", f"{size} is not between 65535 and 2147483647")
        streams = http2.max_concurrent_streams
        if streams is not None and not 1 <= streams <= 2**31 - 1:
            report.error(
                f"{where}.maxConcurrentStreams", f"{streams} is not between 1 and 2147483647"
            )
        out["http2"] = ir.Http2Options(
            max_concurrent_streams=streams,
            initial_stream_window_size=http2.initial_stream_window_size,
            initial_connection_window_size=http2.initial_connection_window_size,
            override_stream_error_on_invalid_http_message=(
                http2.override_stream_error_on_invalid_http_message
            ),
        )
    return out


def _upgrades(
    upgrades: list[ProtocolUpgradeConfig], report: ResourceReport
) -> tuple[UpgradeType, ...]:
    """The upgrades allowed: `upgrades` replaces gw's default (WebSocket only)."""
    out: list[UpgradeType] = []
    for i, upgrade in enumerate(upgrades):
        where = f"{FIELD}.upgrades[{i}]"
        chosen = [
            (name, spec)
            for name, spec in (
                ("websocket", upgrade.websocket),
                ("connect", upgrade.connect),
                ("connectTerminate", upgrade.connect_terminate),
            )
            if spec is not None
        ]
        if len(chosen) != 1:
            report.error(where, "set exactly one of websocket, connect or connectTerminate")
            continue
        name, spec = chosen[0]
        if name == "connectTerminate":
            report.error(
                f"{where}.connectTerminate",
                "connectTerminate is not supported: gw's routes do not terminate CONNECT; "
                "use connect to proxy CONNECT requests",
            )
            continue
        kind: UpgradeType = "websocket" if name == "websocket" else "CONNECT"
        if kind in out:
            report.error(where, f"{name} is listed twice")
        elif spec.enabled is not False:
            out.append(kind)
    return tuple(out)


def _early_headers(
    settings: HttpConnectionManagerSettings, secrets: HeaderSecrets, report: ResourceReport
) -> dict[str, Any]:
    early = settings.early_header_manipulation
    if early is None:
        return {}
    where = f"{FIELD}.earlyHeaderManipulation"
    return {
        "early_headers_to_add": headers_to_add(
            early.headers_to_add, f"{where}.headersToAdd", report, secrets
        ),
        "early_headers_to_remove": headers_to_remove(
            early.headers_to_remove, f"{where}.headersToRemove", report
        ),
    }
