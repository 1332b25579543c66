"""`ir.AccessLog` → Envoy access loggers: `file` (a string or JSON format), `http_grpc`
(entries streamed to an access log service over gRPC) or `open_telemetry` (OTLP log records
to a collector, with the fields Envoy 1.40 has in place of its deprecated `common_config`:
`protos.py`), each with its filter. The HTTP
connection manager writes the per-request ones (`envoy/hcm.py`), the listener the
per-connection ones (`envoy/listeners.py`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from envoy.config.accesslog.v3 import accesslog_pb2
from envoy.config.core.v3 import base_pb2, config_source_pb2, grpc_service_pb2
from envoy.config.core.v3 import substitution_format_string_pb2 as format_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.access_loggers.file.v3 import file_pb2
from envoy.extensions.access_loggers.grpc.v3 import als_pb2
from envoy.extensions.access_loggers.open_telemetry.v3 import logs_service_pb2
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from envoy.type.v3 import percent_pb2, range_pb2
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names, protos
from gw.translator.envoy.packing import pack

_FILTER = accesslog_pb2.AccessLogFilter


def build_access_logs(logs: Sequence[ir.AccessLog]) -> list[accesslog_pb2.AccessLog]:
    return [build_access_log(log) for log in logs]


def build_access_log(log: ir.AccessLog) -> accesslog_pb2.AccessLog:
    if log.sink == "file":
        out = accesslog_pb2.AccessLog(name=names.FILE_ACCESS_LOG, typed_config=pack(_file(log)))
    elif log.sink == "grpc":
        out = accesslog_pb2.AccessLog(name=names.GRPC_ACCESS_LOG, typed_config=pack(_grpc(log)))
    else:
        out = accesslog_pb2.AccessLog(name=names.OTEL_ACCESS_LOG, typed_config=pack(_otel(log)))
    if log.filter is not None:
        out.filter.CopyFrom(build_filter(log.filter))
    return out


def _file(log: ir.AccessLog) -> file_pb2.FileAccessLog:
    out = file_pb2.FileAccessLog(path=log.path)
    if log.json_format is not None:
        structure = struct_pb2.Struct()
        structure.update(json.loads(log.json_format))
        out.log_format.CopyFrom(format_pb2.SubstitutionFormatString(json_format=structure))
    elif log.text_format:
        out.log_format.CopyFrom(
            format_pb2.SubstitutionFormatString(
                text_format_source=base_pb2.DataSource(inline_string=log.text_format)
            )
        )
    return out


def _grpc(log: ir.AccessLog) -> als_pb2.HttpGrpcAccessLogConfig:
    return als_pb2.HttpGrpcAccessLogConfig(
        common_config=als_pb2.CommonGrpcAccessLogConfig(
            log_name=log.log_name,
            grpc_service=grpc_service_pb2.GrpcService(
                envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(cluster_name=log.cluster)
            ),
            transport_api_version=config_source_pb2.V3,
            filter_state_objects_to_log=list(log.filter_state_objects),
        ),
        additional_request_headers_to_log=list(log.request_headers),
        additional_response_headers_to_log=list(log.response_headers),
        additional_response_trailers_to_log=list(log.response_trailers),
    )


def _otel(log: ir.AccessLog) -> Message:
    collector = log.collector
    assert collector is not None
    service = grpc_service_pb2.GrpcService(
        envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
            cluster_name=log.cluster, authority=collector.authority
        ),
        initial_metadata=[base_pb2.HeaderValue(key=k, value=v) for k, v in collector.headers],
    )
    generated = logs_service_pb2.OpenTelemetryAccessLogConfig(
        disable_builtin_labels=log.disable_builtin_labels
    )
    if log.otel_body is not None:
        json_format.ParseDict(json.loads(log.otel_body), generated.body)
    if log.otel_attributes is not None:
        json_format.ParseDict(json.loads(log.otel_attributes), generated.attributes)
    # `common_config` is deprecated in Envoy 1.40, in favour of these fields of its own.
    out: Any = protos.message(generated)
    out.log_name = log.log_name
    out.grpc_service.MergeFromString(service.SerializeToString(deterministic=True))
    out.filter_state_objects_to_log.extend(log.filter_state_objects)
    result: Message = out
    return result


def build_filter(f: ir.LogFilter) -> accesslog_pb2.AccessLogFilter:
    match f.kind:
        case "status_code":
            return _FILTER(status_code_filter=accesslog_pb2.StatusCodeFilter(comparison=_cmp(f)))
        case "duration":
            return _FILTER(duration_filter=accesslog_pb2.DurationFilter(comparison=_cmp(f)))
        case "not_health_check":
            return _FILTER(not_health_check_filter=accesslog_pb2.NotHealthCheckFilter())
        case "traceable":
            return _FILTER(traceable_filter=accesslog_pb2.TraceableFilter())
        case "runtime":
            percent = percent_pb2.FractionalPercent(
                numerator=f.numerator,
                denominator=percent_pb2.FractionalPercent.DenominatorType.Value(f.denominator),
            )
            return _FILTER(
                runtime_filter=accesslog_pb2.RuntimeFilter(
                    runtime_key=f.runtime_key,
                    percent_sampled=percent,
                    use_independent_randomness=f.independent_randomness,
                )
            )
        case "and":
            return _FILTER(
                and_filter=accesslog_pb2.AndFilter(filters=[build_filter(s) for s in f.filters])
            )
        case "or":
            return _FILTER(
                or_filter=accesslog_pb2.OrFilter(filters=[build_filter(s) for s in f.filters])
            )
        case "header":
            assert f.header is not None
            return _FILTER(header_filter=accesslog_pb2.HeaderFilter(header=_header(f.header)))
        case "response_flag":
            return _FILTER(response_flag_filter=accesslog_pb2.ResponseFlagFilter(flags=f.flags))
    status = accesslog_pb2.GrpcStatusFilter.Status
    return _FILTER(
        grpc_status_filter=accesslog_pb2.GrpcStatusFilter(
            statuses=[status.Value(s) for s in f.statuses], exclude=f.exclude
        )
    )


def _cmp(f: ir.LogFilter) -> accesslog_pb2.ComparisonFilter:
    return accesslog_pb2.ComparisonFilter(
        op=accesslog_pb2.ComparisonFilter.Op.Value(f.op),
        value=base_pb2.RuntimeUInt32(default_value=f.default_value, runtime_key=f.runtime_key),
    )


def _header(header: ir.LogHeader) -> rc_pb2.HeaderMatcher:
    out = rc_pb2.HeaderMatcher(name=header.name, invert_match=header.invert)
    if header.kind == "present":
        out.present_match = True
    elif header.kind == "range":
        out.range_match.CopyFrom(range_pb2.Int64Range(start=header.start, end=header.end))
    elif header.kind == "regex":
        out.string_match.CopyFrom(
            string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex=header.value))
        )
    else:
        out.string_match.CopyFrom(string_pb2.StringMatcher(**{header.kind: header.value}))
    return out
