"""Access logs of a listener: a Gateway's `spec.options.accessLoggingService` (one entry per
request, written by the HTTP connection manager) and `listenerAccessLoggingService` (one
entry per connection, written by the listener). Field names and shapes are the established
gateway's `als` options.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model

UInt32 = Annotated[int, Field(ge=0, le=2**32 - 1)]
#: A protobuf `Struct` (`jsonFormat`): free-form by design, each value a format string.
#: The marker tells `scripts/compatibility.py` that gw reads it (it is not untyped data).
FreeForm = Annotated[dict[str, Any], Field(json_schema_extra={"x-gw-free-form": True})]


class FileSink(Model):
    """Entries appended to `path` (`/dev/stdout` for the proxy's output): `stringFormat`
    (empty: Envoy's default line) or `jsonFormat` (one JSON object per line)."""

    path: str = ""
    string_format: str | None = None
    json_format: FreeForm | None = None


class GrpcService(Model):
    """Entries streamed to a gRPC access log service (Envoy's `AccessLogService`)."""

    log_name: str = ""
    static_cluster_name: str | None = None
    additional_request_headers_to_log: list[str] = []
    additional_response_headers_to_log: list[str] = []
    additional_response_trailers_to_log: list[str] = []
    filter_state_objects_to_log: list[str] = []


class OpenTelemetryGrpcCollector(Model):
    endpoint: str = ""
    authority: str = ""
    headers: dict[str, str] = {}
    insecure: bool = False
    ssl_config: dict[str, Any] | None = None
    timeout: Duration | None = None


class OpenTelemetryService(Model):
    log_name: str = ""
    collector: OpenTelemetryGrpcCollector | None = None
    filter_state_objects_to_log: list[str] = []
    disable_builtin_labels: bool = False
    body: dict[str, Any] | None = None
    attributes: dict[str, Any] | None = None


class RuntimeUInt32(Model):
    default_value: UInt32 = 0
    runtime_key: str = ""


class ComparisonFilter(Model):
    op: Literal["EQ", "GE", "LE"] = "EQ"
    value: RuntimeUInt32 | None = None


class StatusCodeFilter(Model):
    comparison: ComparisonFilter | None = None


class DurationFilter(Model):
    comparison: ComparisonFilter | None = None


class Empty(Model):
    pass


class FractionalPercent(Model):
    numerator: UInt32 = 0
    denominator: Literal["HUNDRED", "TEN_THOUSAND", "MILLION"] = "HUNDRED"


class RuntimeFilter(Model):
    runtime_key: str = ""
    percent_sampled: FractionalPercent | None = None
    use_independent_randomness: bool = False


class GoogleRe2(Model):
    max_program_size: UInt32 | None = None


class SafeRegex(Model):
    regex: str = ""
    #: Deprecated in Envoy: the limit is Envoy's own (stage 1 says so).
    google_re2: GoogleRe2 | None = None


class Int64Range(Model):
    start: int = 0
    end: int = 0


class HeaderMatcher(Model):
    """One request header test (Envoy's route `HeaderMatcher`); no value test: present."""

    name: str = ""
    exact_match: str | None = None
    safe_regex_match: SafeRegex | None = None
    range_match: Int64Range | None = None
    present_match: bool | None = None
    prefix_match: str | None = None
    suffix_match: str | None = None
    invert_match: bool = False


class HeaderFilter(Model):
    header: HeaderMatcher | None = None


class ResponseFlagFilter(Model):
    flags: list[str] = []


GrpcStatus = Literal[
    "OK", "CANCELED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
]  # fmt: skip


class GrpcStatusFilter(Model):
    statuses: list[GrpcStatus] = []
    exclude: bool = False


class AndFilter(Model):
    filters: list[AccessLogFilter] = []


class OrFilter(Model):
    filters: list[AccessLogFilter] = []


class AccessLogFilter(Model):
    """Which requests are logged: exactly one test (`andFilter`/`orFilter` combine them)."""

    status_code_filter: StatusCodeFilter | None = None
    duration_filter: DurationFilter | None = None
    not_health_check_filter: Empty | None = None
    traceable_filter: Empty | None = None
    runtime_filter: RuntimeFilter | None = None
    and_filter: AndFilter | None = None
    or_filter: OrFilter | None = None
    header_filter: HeaderFilter | None = None
    response_flag_filter: ResponseFlagFilter | None = None
    grpc_status_filter: GrpcStatusFilter | None = None


class AccessLog(Model):
    """One log: exactly one of `fileSink`, `grpcService`, `openTelemetryService`."""

    file_sink: FileSink | None = None
    grpc_service: GrpcService | None = None
    open_telemetry_service: OpenTelemetryService | None = None
    filter: AccessLogFilter | None = None


class AccessLoggingService(Model):
    access_log: list[AccessLog] = []
