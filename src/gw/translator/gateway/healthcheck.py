"""`healthChecks` (Upstream) → `ir.HealthCheck`s: Envoy's active HTTP, TCP and gRPC checks.

Every check needs `timeout`, `interval`, `healthyThreshold` and `unhealthyThreshold` (the
established gateway refuses a check without thresholds with the same words) and exactly one
checker. What Envoy would refuse is reported here: an empty HTTP path, status ranges
outside 100–600, TCP payloads that are not hex, header names Envoy cannot send.
"""

from __future__ import annotations

import re

from gw.api.duration import optional_ms
from gw.api.healthcheck import GrpcHealthCheck, HealthCheck, HttpHealthCheck, TcpHealthCheck
from gw.translator import ir
from gw.translator.gateway.headers import HeaderSecrets, headers_to_add, headers_to_remove
from gw.translator.reports import ResourceReport

_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")


#: Envoy runs several health checks on a cluster (all must pass), up to this many.
MAX_CHECKS = 8


def build_health_checks(
    checks: list[HealthCheck], field: str, report: ResourceReport, secrets: HeaderSecrets
) -> tuple[ir.HealthCheck, ...]:
    """The checks; their request headers may come from header secrets (`secrets`)."""
    if len(checks) > MAX_CHECKS:
        report.error(
            field,
            f"{len(checks)} health checks: Envoy runs at most {MAX_CHECKS} on a cluster; "
            "combine or remove some",
        )
        return ()
    out = []
    for i, check in enumerate(checks):
        built = _health_check(check, i, f"{field}[{i}]", report, secrets)
        if built is not None:
            out.append(built)
    return tuple(out)


def _health_check(
    check: HealthCheck, index: int, field: str, report: ResourceReport, secrets: HeaderSecrets
) -> ir.HealthCheck | None:
    errors = len(report.errors)
    _check_timing(check, index, field, report)
    checkers = [
        name
        for name, value in (
            ("httpHealthCheck", check.http_health_check),
            ("tcpHealthCheck", check.tcp_health_check),
            ("grpcHealthCheck", check.grpc_health_check),
            ("customHealthCheck", check.custom_health_check),
        )
        if value is not None
    ]
    if len(checkers) != 1:
        found = " and ".join(checkers) if checkers else "none"
        report.error(
            field,
            "a health check needs exactly one of httpHealthCheck, tcpHealthCheck and "
            f"grpcHealthCheck (found {found})",
        )
        return None
    http = tcp = grpc = None
    if check.http_health_check is not None:
        http = _http(check.http_health_check, f"{field}.httpHealthCheck", report, secrets)
    elif check.tcp_health_check is not None:
        tcp = _tcp(check.tcp_health_check, f"{field}.tcpHealthCheck", report)
    elif check.grpc_health_check is not None:
        grpc = _grpc(check.grpc_health_check, f"{field}.grpcHealthCheck", report, secrets)
    else:
        report.error(
            f"{field}.customHealthCheck",
            "customHealthCheck is not supported in gw: it needs Envoy health checker "
            "extensions configured as raw Envoy config; use httpHealthCheck, tcpHealthCheck "
            "or grpcHealthCheck",
        )
    if len(report.errors) > errors:
        return None
    return ir.HealthCheck(
        timeout_ms=optional_ms(check.timeout) or 0,
        interval_ms=optional_ms(check.interval) or 0,
        healthy_threshold=check.healthy_threshold or 0,
        unhealthy_threshold=check.unhealthy_threshold or 0,
        http=http,
        tcp=tcp,
        grpc=grpc,
        initial_jitter_ms=optional_ms(check.initial_jitter),
        interval_jitter_ms=optional_ms(check.interval_jitter),
        interval_jitter_percent=check.interval_jitter_percent or None,
        reuse_connection=check.reuse_connection,
        no_traffic_interval_ms=optional_ms(check.no_traffic_interval),
        unhealthy_interval_ms=optional_ms(check.unhealthy_interval),
        unhealthy_edge_interval_ms=optional_ms(check.unhealthy_edge_interval),
        healthy_edge_interval_ms=optional_ms(check.healthy_edge_interval),
        event_log_path=check.event_log_path or None,
        always_log_health_check_failures=check.always_log_health_check_failures,
    )


def _check_timing(check: HealthCheck, index: int, field: str, report: ResourceReport) -> None:
    """Timeout, interval and thresholds are required; intervals, when set, above 0."""
    for name, value in (("timeout", check.timeout), ("interval", check.interval)):
        if value is None or not optional_ms(value):
            report.error(f"{field}.{name}", f"{name} is required and must be above 0 (e.g. 1s)")
    for name, threshold in (
        ("HealthyThreshold", check.healthy_threshold),
        ("UnhealthyThreshold", check.unhealthy_threshold),
    ):
        if threshold is None:
            where = f"{field}.{name[0].lower()}{name[1:]}"
            report.error(where, f"The field HealthCheck[{index}].{name} cannot be nil")
    for name, value in (
        ("noTrafficInterval", check.no_traffic_interval),
        ("unhealthyInterval", check.unhealthy_interval),
        ("unhealthyEdgeInterval", check.unhealthy_edge_interval),
        ("healthyEdgeInterval", check.healthy_edge_interval),
    ):
        if value is not None and not optional_ms(value):
            report.error(f"{field}.{name}", f"{name} must be above 0 when set")


def _http(
    check: HttpHealthCheck, field: str, report: ResourceReport, secrets: HeaderSecrets
) -> ir.HttpHealthCheck | None:
    if not check.path.startswith("/"):
        report.error(
            f"{field}.path", "the path to check is required and starts with / (e.g. /healthz)"
        )
    if check.method in ("CONNECT",):
        report.error(f"{field}.method", "CONNECT cannot be used to check health")
    if check.response_assertions is not None:
        report.error(
            f"{field}.responseAssertions",
            "responseAssertions is not supported in gw: it needs the enterprise advanced HTTP "
            "health checker; use expectedStatuses",
        )
    ranges = []
    for i, status in enumerate(check.expected_statuses):
        if not 100 <= status.start < status.end <= 600:
            report.error(
                f"{field}.expectedStatuses[{i}]",
                f"[{status.start}, {status.end}) is not a range of HTTP statuses: start at 100 "
                "or above, end above start and at most 600",
            )
        ranges.append((status.start, status.end))
    return ir.HttpHealthCheck(
        path=check.path,
        host=check.host or None,
        method=None if check.method in (None, "METHOD_UNSPECIFIED") else check.method,
        http2=check.use_http2,
        expected_statuses=tuple(ranges),
        request_headers_to_add=headers_to_add(
            check.request_headers_to_add, f"{field}.requestHeadersToAdd", report, secrets
        ),
        request_headers_to_remove=headers_to_remove(
            check.request_headers_to_remove, f"{field}.requestHeadersToRemove", report
        ),
        service_name_prefix=check.service_name or None,
    )


def _tcp(check: TcpHealthCheck, field: str, report: ResourceReport) -> ir.TcpHealthCheck:
    payloads = [("send", check.send)] + [(f"receive[{i}]", p) for i, p in enumerate(check.receive)]
    for where, payload in payloads:
        if payload is not None and not _HEX.fullmatch(payload.text):
            report.error(
                f"{field}.{where}.text",
                f"{payload.text!r} is not hex-encoded bytes (e.g. 000000FF)",
            )
    return ir.TcpHealthCheck(
        send=check.send.text if check.send is not None else None,
        receive=tuple(p.text for p in check.receive),
    )


def _grpc(
    check: GrpcHealthCheck, field: str, report: ResourceReport, secrets: HeaderSecrets
) -> ir.GrpcHealthCheck:
    return ir.GrpcHealthCheck(
        service_name=check.service_name or None,
        authority=check.authority or None,
        initial_metadata=headers_to_add(
            check.initial_metadata, f"{field}.initialMetadata", report, secrets
        ),
    )
