"""A Gateway's `options.accessLoggingService` / `listenerAccessLoggingService` →
`ir.AccessLog`s.

Each log is a file (`fileSink`: a path, a string or JSON format, here), a gRPC access log
service (`grpcService`) or an OpenTelemetry collector (`openTelemetryService`), both in
`access_log_sinks.py`, with an optional filter (`access_log_filter.py`). Formats and
filters are checked so that Envoy never refuses the listener.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gw.api import ResourceKey
from gw.api.access_log import AccessLog, AccessLoggingService, FileSink
from gw.translator import ir
from gw.translator.gateway.access_log_filter import build_log_filter
from gw.translator.gateway.access_log_sinks import grpc_log, otel_log
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

#: A `%` starts a command operator (`%START_TIME%`, `%REQ(x-id)%`, `%REQ(:PATH):10%`) or is
#: written `%%`. Which names exist is Envoy's to say (a NACK shows on the Proxy).
_OPERATOR = re.compile(r"%[A-Z][A-Z0-9_]*(?:\([^)%]*\))?(?::\d+)?%")


def build_access_logs(
    service: AccessLoggingService | None,
    field: str,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> tuple[ir.AccessLog, ...]:
    """The logs of one `accessLoggingService` block (findings on `report`)."""
    if service is None:
        return ()
    out = []
    for i, log in enumerate(service.access_log):
        built = _log(log, f"{field}.accessLog[{i}]", refs, owner, report)
        if built is not None:
            out.append(built)
    return tuple(out)


def _log(
    log: AccessLog, field: str, refs: Refs, owner: ResourceKey, report: ResourceReport
) -> ir.AccessLog | None:
    sinks = [
        name
        for name, value in (
            ("fileSink", log.file_sink),
            ("grpcService", log.grpc_service),
            ("openTelemetryService", log.open_telemetry_service),
        )
        if value is not None
    ]
    if len(sinks) != 1:
        report.error(field, "set exactly one of fileSink, grpcService and openTelemetryService")
        return None
    log_filter = build_log_filter(log.filter, f"{field}.filter", report) if log.filter else None
    if log.filter is not None and log_filter is None:
        return None
    if log.file_sink is not None:
        return _file(log.file_sink, f"{field}.fileSink", log_filter, report)
    if log.grpc_service is not None:
        return grpc_log(log.grpc_service, f"{field}.grpcService", log_filter, refs, owner, report)
    assert log.open_telemetry_service is not None
    where = f"{field}.openTelemetryService"
    return otel_log(log.open_telemetry_service, where, log_filter, owner, report)


def _file(
    sink: FileSink, field: str, log_filter: ir.LogFilter | None, report: ResourceReport
) -> ir.AccessLog | None:
    errors = len(report.errors)
    if not sink.path:
        report.error(f"{field}.path", "name the file, e.g. /dev/stdout")
    if sink.string_format is not None and sink.json_format is not None:
        report.error(field, "set one of stringFormat and jsonFormat")
    if sink.string_format and (problem := format_problem(sink.string_format)) is not None:
        report.error(f"{field}.stringFormat", problem)
    json_text = None
    if sink.json_format is not None:
        if not sink.json_format:
            report.error(
                f"{field}.jsonFormat", "name at least one key, e.g. {status: '%RESPONSE_CODE%'}"
            )
        _check_json(sink.json_format, f"{field}.jsonFormat", report)
        json_text = json.dumps(sink.json_format, sort_keys=True, separators=(",", ":"))
    if len(report.errors) > errors:
        return None
    return ir.AccessLog(
        sink="file",
        path=sink.path,
        text_format=sink.string_format or "",
        json_format=json_text,
        filter=log_filter,
    )


def format_problem(text: str) -> str | None:
    """Why Envoy would refuse `text` as a format string (None: it reads it)."""
    at = 0
    while (start := text.find("%", at)) >= 0:
        if text.startswith("%%", start):
            at = start + 2
            continue
        match = _OPERATOR.match(text, start)
        if match is None:
            return (
                f"the % at position {start} starts no command operator: write %% for a "
                "literal %, or an operator such as %START_TIME% or %REQ(x-request-id)%"
            )
        at = match.end()
    return None


def _check_json(value: dict[str, Any], field: str, report: ResourceReport) -> None:
    for key, item in value.items():
        where = f"{field}.{key}"
        if isinstance(item, dict):
            _check_json(item, where, report)
        elif isinstance(item, str):
            if (problem := format_problem(item)) is not None:
                report.error(where, problem)
        elif isinstance(item, list):
            report.error(where, "a JSON format value is a string, a number, a boolean or an object")
