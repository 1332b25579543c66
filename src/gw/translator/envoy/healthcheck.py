"""IR health checking → Envoy's active health checks and outlier detection on a cluster."""

from __future__ import annotations

from envoy.config.cluster.v3 import cluster_pb2, outlier_detection_pb2
from envoy.config.core.v3 import base_pb2, extension_pb2, health_check_pb2
from envoy.extensions.health_check.event_sinks.file.v3 import file_pb2
from envoy.type.matcher.v3 import string_pb2
from envoy.type.v3 import http_pb2, range_pb2
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import protos
from gw.translator.envoy.durations import duration_ms
from gw.translator.envoy.headers import header_option
from gw.translator.envoy.packing import pack

#: The file sink for health check events (`eventLogPath`).
EVENT_FILE_SINK = "envoy.health_check.event_sinks.file"


def add_health_checks(out: cluster_pb2.Cluster, cluster: ir.Cluster) -> None:
    checks = cluster.health_checks or ()
    for i, check in enumerate(checks):
        built = build_health_check(check)
        if len(checks) > 1:
            # Envoy runs every check and needs each named; its stats are then under
            # `health_check.name.<name>.` (one check keeps the plain `health_check.`).
            protos.merge_added(built, name=f"check-{i}")
        out.health_checks.append(built)
    if cluster.outlier_detection is not None:
        out.outlier_detection.CopyFrom(build_outlier_detection(cluster.outlier_detection))


def build_health_check(check: ir.HealthCheck) -> health_check_pb2.HealthCheck:
    out = health_check_pb2.HealthCheck(
        timeout=duration_ms(check.timeout_ms),
        interval=duration_ms(check.interval_ms),
        healthy_threshold=wrappers_pb2.UInt32Value(value=check.healthy_threshold),
        unhealthy_threshold=wrappers_pb2.UInt32Value(value=check.unhealthy_threshold),
        always_log_health_check_failures=check.always_log_health_check_failures,
    )
    for name, ms in (
        ("initial_jitter", check.initial_jitter_ms),
        ("interval_jitter", check.interval_jitter_ms),
        ("no_traffic_interval", check.no_traffic_interval_ms),
        ("unhealthy_interval", check.unhealthy_interval_ms),
        ("unhealthy_edge_interval", check.unhealthy_edge_interval_ms),
        ("healthy_edge_interval", check.healthy_edge_interval_ms),
    ):
        if ms is not None:
            getattr(out, name).CopyFrom(duration_ms(ms))
    if check.interval_jitter_percent is not None:
        out.interval_jitter_percent = check.interval_jitter_percent
    if check.reuse_connection is not None:
        out.reuse_connection.value = check.reuse_connection
    if check.event_log_path is not None:
        sink = file_pb2.HealthCheckEventFileSink(event_log_path=check.event_log_path)
        out.event_logger.append(
            extension_pb2.TypedExtensionConfig(name=EVENT_FILE_SINK, typed_config=pack(sink))
        )
    if check.http is not None:
        out.http_health_check.CopyFrom(_http(check.http))
    elif check.tcp is not None:
        out.tcp_health_check.CopyFrom(_tcp(check.tcp))
    elif check.grpc is not None:
        out.grpc_health_check.CopyFrom(_grpc(check.grpc))
    return out


def _http(check: ir.HttpHealthCheck) -> health_check_pb2.HealthCheck.HttpHealthCheck:
    out = health_check_pb2.HealthCheck.HttpHealthCheck(
        path=check.path,
        host=check.host or "",
        request_headers_to_add=[header_option(h) for h in check.request_headers_to_add],
        request_headers_to_remove=list(check.request_headers_to_remove),
        expected_statuses=[
            range_pb2.Int64Range(start=s, end=e) for s, e in check.expected_statuses
        ],
    )
    if check.http2:
        out.codec_client_type = http_pb2.HTTP2
    if check.method is not None:
        out.method = base_pb2.RequestMethod.Value(check.method)
    if check.service_name_prefix is not None:
        out.service_name_matcher.CopyFrom(
            string_pb2.StringMatcher(prefix=check.service_name_prefix)
        )
    return out


def _tcp(check: ir.TcpHealthCheck) -> health_check_pb2.HealthCheck.TcpHealthCheck:
    out = health_check_pb2.HealthCheck.TcpHealthCheck(
        receive=[health_check_pb2.HealthCheck.Payload(text=t) for t in check.receive]
    )
    if check.send is not None:
        out.send.text = check.send
    return out


def _grpc(check: ir.GrpcHealthCheck) -> health_check_pb2.HealthCheck.GrpcHealthCheck:
    return health_check_pb2.HealthCheck.GrpcHealthCheck(
        service_name=check.service_name or "",
        authority=check.authority or "",
        initial_metadata=[header_option(h) for h in check.initial_metadata],
    )


def build_outlier_detection(
    detection: ir.OutlierDetection,
) -> outlier_detection_pb2.OutlierDetection:
    out = outlier_detection_pb2.OutlierDetection(
        interval=duration_ms(detection.interval_ms),
        split_external_local_origin_errors=detection.split_external_local_origin_errors,
    )
    if detection.base_ejection_time_ms is not None:
        out.base_ejection_time.CopyFrom(duration_ms(detection.base_ejection_time_ms))
    counts = (
        ("consecutive_5xx", detection.consecutive_5xx),
        ("max_ejection_percent", detection.max_ejection_percent),
        ("enforcing_consecutive_5xx", detection.enforcing_consecutive_5xx),
        ("enforcing_success_rate", detection.enforcing_success_rate),
        ("success_rate_minimum_hosts", detection.success_rate_minimum_hosts),
        ("success_rate_request_volume", detection.success_rate_request_volume),
        ("success_rate_stdev_factor", detection.success_rate_stdev_factor),
        ("consecutive_gateway_failure", detection.consecutive_gateway_failure),
        ("enforcing_consecutive_gateway_failure", detection.enforcing_consecutive_gateway_failure),
        ("consecutive_local_origin_failure", detection.consecutive_local_origin_failure),
        (
            "enforcing_consecutive_local_origin_failure",
            detection.enforcing_consecutive_local_origin_failure,
        ),
        ("enforcing_local_origin_success_rate", detection.enforcing_local_origin_success_rate),
    )
    for name, value in counts:
        if value is not None:
            getattr(out, name).value = value
    return out
