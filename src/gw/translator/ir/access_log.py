"""Access logs of a listener: where each entry goes (a file, or a gRPC access log service
reached through a cluster), how it is written, and which requests or connections are
logged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LogFilterKind = Literal[
    "status_code", "duration", "not_health_check", "traceable", "runtime", "and", "or",
    "header", "response_flag", "grpc_status",
]  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class LogHeader:
    """A request header test: `kind` `present` ignores `value`; `range` reads `start` and
    `end` (the value is an integer in [start, end))."""

    name: str
    kind: Literal["exact", "prefix", "suffix", "regex", "present", "range"]
    value: str = ""
    start: int = 0
    end: int = 0
    invert: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LogFilter:
    """Which entries are written. `status_code` and `duration` compare (`op`) with
    `default_value` (overridable in Envoy's runtime under `runtime_key`); `runtime` samples
    `numerator`/`denominator`; `and`/`or` combine `filters`; `header` tests `header`;
    `response_flag` keeps entries with one of `flags` (any flag when empty); `grpc_status`
    keeps (or, with `exclude`, drops) the `statuses`."""

    kind: LogFilterKind
    op: Literal["EQ", "GE", "LE"] = "EQ"
    default_value: int = 0
    runtime_key: str = ""
    numerator: int = 0
    denominator: Literal["HUNDRED", "TEN_THOUSAND", "MILLION"] = "HUNDRED"
    independent_randomness: bool = False
    filters: tuple[LogFilter, ...] = ()
    header: LogHeader | None = None
    flags: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    exclude: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LogCollector:
    """Where an OpenTelemetry collector listens (its cluster is gw's own, HTTP/2, over TLS
    when `tls`), and what its gRPC calls carry (`authority`, `headers` as initial
    metadata)."""

    address: str
    port: int
    tls: bool = True
    authority: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    connect_timeout_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessLog:
    """One log. `file`: appended to `path` as `text_format` (empty: Envoy's default line) or
    as the JSON object `json_format` (JSON text, keys sorted). `grpc`: streamed as
    `log_name` to the access log service of `cluster`, with the extra headers named.
    `opentelemetry`: sent as OTLP log records to `collector` (through `cluster`), their body
    and attributes (`otel_*`, OpenTelemetry's JSON of `AnyValue` / `KeyValueList`) with the
    operators filled in."""

    sink: Literal["file", "grpc", "opentelemetry"]
    path: str = ""
    text_format: str = ""
    json_format: str | None = None
    log_name: str = ""
    cluster: str = ""
    request_headers: tuple[str, ...] = ()
    response_headers: tuple[str, ...] = ()
    response_trailers: tuple[str, ...] = ()
    filter_state_objects: tuple[str, ...] = ()
    collector: LogCollector | None = None
    otel_body: str | None = None
    otel_attributes: str | None = None
    disable_builtin_labels: bool = False
    filter: LogFilter | None = None
