"""A Gateway's listener `options`, `useProxyProto` and `httpGateway.options.connectionLimit`
→ `ir.ListenerOptions`: how the listener accepts connections.

Built: `socketOptions`, `perConnectionBufferLimitBytes`, `proxyProtocol` (and the deprecated
`useProxyProto: true`, which means `proxyProtocol: {}`), `connectionBalanceConfig`, the access
logs (`access_log.py`), and the established `connectionLimit` and `networkLocalRatelimit` of
`httpGateway.options`, and `tcpStats`. `extensions` is refused by name: gw has no extension
plugins.
"""

from __future__ import annotations

import base64
import binascii

from gw.api import ResourceKey
from gw.api.gateway import GatewaySpec
from gw.api.listener_options import ConnectionLimit, ListenerOptions, ProxyProtocol, SocketOption
from gw.translator import ir
from gw.translator.gateway.access_log import build_access_logs
from gw.translator.gateway.hcm import checked_ms
from gw.translator.gateway.local_ratelimit import build_connection_ratelimit
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

FIELD = "spec.options"
#: Established fields not built yet: (attribute, manifest name, why).
_NOT_BUILT = (("extensions", "extensions", "gw has no extension plugins"),)


def build_listener_options(
    spec: GatewaySpec, refs: Refs, owner: ResourceKey, report: ResourceReport
) -> ir.ListenerOptions | None:
    """The listener's connection options, or None after reporting errors."""
    errors = len(report.errors)
    options = spec.options or ListenerOptions()
    for name, camel, why in _NOT_BUILT:
        if getattr(options, name) is not None:
            report.error(f"{FIELD}.{camel}", f"{camel} is not supported: {why}; remove it")
    socket_options = []
    for i, option in enumerate(options.socket_options):
        built_option = _socket_option(option, f"{FIELD}.socketOptions[{i}]", report)
        if built_option is not None:
            socket_options.append(built_option)
    proxy_protocol = options.proxy_protocol
    if proxy_protocol is None and spec.use_proxy_proto:
        proxy_protocol = ProxyProtocol()
    http = spec.http_gateway.options if spec.http_gateway else None
    limit = http.connection_limit if http else None
    balance = options.connection_balance_config
    logs = {
        name: build_access_logs(getattr(options, name), f"{FIELD}.{camel}", refs, owner, report)
        for name, camel in (
            ("access_logging_service", "accessLoggingService"),
            ("listener_access_logging_service", "listenerAccessLoggingService"),
        )
    }
    bucket = http.network_local_ratelimit if http else None
    built = ir.ListenerOptions(
        socket_options=tuple(socket_options),
        per_connection_buffer_limit_bytes=options.per_connection_buffer_limit_bytes,
        proxy_protocol=_proxy_protocol(proxy_protocol, report) if proxy_protocol else None,
        connection_limit=build_connection_limit(limit, report) if limit else None,
        exact_balance=bool(balance and balance.exact_balance is not None),
        access_logs=logs["access_logging_service"],
        listener_access_logs=logs["listener_access_logging_service"],
        connection_ratelimit=build_connection_ratelimit(bucket, report) if bucket else None,
        tcp_stats=bool(options.tcp_stats),
    )
    return built if len(report.errors) == errors else None


def _socket_option(
    option: SocketOption, field: str, report: ResourceReport
) -> ir.SocketOption | None:
    if (option.int_value is None) == (option.buf_value is None):
        report.error(field, "set exactly one of intValue and bufValue")
        return None
    raw: bytes | None = None
    if option.buf_value is not None:
        try:
            raw = base64.b64decode(option.buf_value, validate=True)
        except (binascii.Error, ValueError):
            report.error(f"{field}.bufValue", "is not base64 (bytes are written in base64)")
            return None
    return ir.SocketOption(
        description=option.description,
        level=option.level,
        name=option.name,
        int_value=option.int_value,
        buf_hex=raw.hex() if raw is not None else None,
        state=option.state or "STATE_PREBIND",
    )


def _proxy_protocol(config: ProxyProtocol, report: ResourceReport) -> ir.ProxyProtocol:
    rules = []
    for i, rule in enumerate(config.rules):
        pair = rule.on_tlv_present
        if pair is None or not pair.key:
            report.error(
                f"{FIELD}.proxyProtocol.rules[{i}].onTlvPresent.key",
                "name the metadata key the TLV's value is stored under",
            )
            continue
        rules.append(
            ir.ProxyProtocolRule(
                tlv_type=rule.tlv_type, metadata_namespace=pair.metadata_namespace, key=pair.key
            )
        )
    return ir.ProxyProtocol(
        rules=tuple(rules),
        allow_requests_without_proxy_protocol=config.allow_requests_without_proxy_protocol,
    )


def build_connection_limit(
    limit: ConnectionLimit,
    report: ResourceReport,
    field: str = "spec.httpGateway.options.connectionLimit",
) -> ir.ConnectionLimit | None:
    if not limit.max_active_connections:
        report.error(f"{field}.maxActiveConnections", "must be at least 1")
        return None
    delay = limit.delay_before_close
    return ir.ConnectionLimit(
        max_connections=limit.max_active_connections,
        delay_ms=checked_ms(delay, f"{field}.delayBeforeClose", report) if delay else None,
    )
