"""Access logs end to end: a Gateway's `options.accessLoggingService` and
`listenerAccessLoggingService` make real Envoy write an entry per request (and per connection
the listener ends itself) to files and to a gRPC access log service.

The access log service and the OpenTelemetry collector are test peers: grpc.aio servers
implementing Envoy's `AccessLogService/StreamAccessLogs` and OpenTelemetry's
`LogsService/Export`, keeping what they receive (no access log service or collector runs
here; what they get is what Envoy sent). The upstream is `gw echo`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from envoy.service.accesslog.v3 import als_pb2
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2

from tests.support.grpc_peer import GrpcPeer
from tests.support.manifests import gateway, upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.raw_http import get, send
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


class AccessLogReceiver:
    """Envoy's gRPC access log service: keeps (log name, entry) of what it receives."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any]] = []
        handler = grpc.method_handlers_generic_handler(
            "envoy.service.accesslog.v3.AccessLogService",
            {
                "StreamAccessLogs": grpc.stream_unary_rpc_method_handler(
                    self._stream,
                    request_deserializer=als_pb2.StreamAccessLogsMessage.FromString,
                    response_serializer=als_pb2.StreamAccessLogsResponse.SerializeToString,
                )
            },
        )
        self.peer = GrpcPeer(handler)
        self.port = self.peer.port

    async def _stream(self, messages: Any, context: Any) -> als_pb2.StreamAccessLogsResponse:
        name = ""
        async for message in messages:
            name = message.identifier.log_name or name  # sent on the stream's first message
            self.entries.extend((name, e) for e in message.http_logs.log_entry)
        return als_pb2.StreamAccessLogsResponse()

    def stop(self) -> None:
        self.peer.stop()


class OtelLogsReceiver:
    """OpenTelemetry's `LogsService/Export`: keeps the log records it receives."""

    def __init__(self) -> None:
        self.records: list[Any] = []

        def export(request: Any, context: Any) -> Any:
            for resource in request.resource_logs:
                for scope in _scope_logs(resource):
                    self.records.extend(_records(scope))
            return logs_service_pb2.ExportLogsServiceResponse()

        handler = grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.logs.v1.LogsService",
            {
                "Export": grpc.unary_unary_rpc_method_handler(
                    export,
                    request_deserializer=logs_service_pb2.ExportLogsServiceRequest.FromString,
                    response_serializer=logs_service_pb2.ExportLogsServiceResponse.SerializeToString,
                )
            },
        )
        self.peer = GrpcPeer(handler)
        self.port = self.peer.port


def _scope_logs(resource_logs: Any) -> Any:
    """Field 2 of `ResourceLogs`: `scope_logs` in today's OTLP, which Envoy sends; the older
    OTLP that xds-protos ships calls it `instrumentation_library_logs` (same wire shape)."""
    if "scope_logs" in resource_logs.DESCRIPTOR.fields_by_name:
        return resource_logs.scope_logs
    return resource_logs.instrumentation_library_logs


def _records(scope_logs: Any) -> Any:
    """Field 2 of `ScopeLogs`: `log_records` today, `logs` in the older OTLP."""
    if "log_records" in scope_logs.DESCRIPTOR.fields_by_name:
        return scope_logs.log_records
    return scope_logs.logs


@dataclass
class Setup:
    gw: GwUp
    logged: int
    proxied: int
    logs: Path
    receiver: AccessLogReceiver
    collector: OtelLogsReceiver


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("access-log")
    logs = root / "logs"
    logs.mkdir()
    echo = Echo(root, "app")
    receiver = AccessLogReceiver()
    collector = OtelLogsReceiver()
    logged, proxied = free_port(), free_port()
    folder = root / "config"
    folder.mkdir()
    als = f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: als, namespace: gw-system}}
spec:
  useHttp2: true
  static: {{hosts: [{{addr: 127.0.0.1, port: {receiver.port}}}]}}
"""
    logged_options = f"""
    accessLoggingService:
      accessLog:
        - fileSink:
            path: {logs}/text.log
            stringFormat: >
              %REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %RESPONSE_CODE% %REQ(x-tag)%
        - fileSink:
            path: {logs}/errors.json
            jsonFormat:
              status: "%RESPONSE_CODE%"
              path: "%REQ(:PATH)%"
              upstream: {{cluster: "%UPSTREAM_CLUSTER%"}}
          filter:
            statusCodeFilter:
              comparison: {{op: GE, value: {{defaultValue: 400, runtimeKey: gw_test.min_status}}}}
        - fileSink: {{path: {logs}/default.log, stringFormat: ""}}
        - grpcService:
            logName: gw-test
            staticClusterName: als_gw-system
            additionalRequestHeadersToLog: [x-tag]
        - openTelemetryService:
            logName: gw-otel
            collector: {{endpoint: "127.0.0.1:{collector.port}", insecure: true}}
            body: {{stringValue: "%REQ(:METHOD)% %REQ(:PATH)% %RESPONSE_CODE%"}}
            attributes:
              values: [{{key: tag, value: {{stringValue: "%REQ(x-tag)%"}}}}]
"""
    proxied_options = f"""
    proxyProtocol: {{}}
    listenerAccessLoggingService:
      accessLog:
        - fileSink:
            path: {logs}/connections.json
            jsonFormat:
              client: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%"
              flags: "%RESPONSE_FLAGS%"
"""
    (folder / "all.yaml").write_text(
        "---".join(
            [
                gateway("logged", logged, options=logged_options),
                gateway("proxied", proxied, options=proxied_options),
                als,
                upstream("app", echo.port),
                virtual_service("app", "*", "app"),
            ]
        )
    )
    try:
        gw = GwUp(folder, root / "home")
        try:
            for name in ("logged", "proxied"):
                gw.wait_status(f"Gateway gw-system.{name}", "Accepted")
            wait_until(
                lambda: _status(logged, "/ready") == 200, what="the logged gateway's listener"
            )
            yield Setup(gw, logged, proxied, logs, receiver, collector)
        finally:
            gw.stop()
    finally:
        receiver.stop()
        collector.peer.stop()
        echo.stop()


def _status(port: int, path: str, **headers: str) -> int:
    try:
        return httpx.get(f"http://127.0.0.1:{port}{path}", headers=headers, timeout=5).status_code
    except httpx.HTTPError:
        return 0


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_a_string_format_writes_one_line_per_request(setup: Setup) -> None:
    assert _status(setup.logged, "/text/one", **{"x-tag": "first"}) == 200
    line = wait_until(
        lambda: next((x for x in _lines(setup.logs / "text.log") if "/text/one" in x), None),
        what="the request's line in the text log",
    )
    assert line == "GET /text/one 200 first"


def test_a_json_format_with_a_status_filter_logs_only_failures(setup: Setup) -> None:
    """Only responses from 400 up are logged (the runtime key is unset: its default
    applies); each entry is one JSON object, nested objects kept."""
    assert _status(setup.logged, "/json/fine") == 200
    assert _status(setup.logged, "/json/broken", **{"x-echo-status": "502"}) == 502
    entry = wait_until(
        lambda: next(
            (json.loads(x) for x in _lines(setup.logs / "errors.json") if "/json/broken" in x),
            None,
        ),
        what="the failed request's JSON entry",
    )
    assert entry == {"status": 502, "path": "/json/broken", "upstream": {"cluster": "app_default"}}
    assert not any("/json/fine" in x for x in _lines(setup.logs / "errors.json"))


def test_an_empty_string_format_is_envoys_default_line(setup: Setup) -> None:
    assert _status(setup.logged, "/default/line") == 200
    line = wait_until(
        lambda: next((x for x in _lines(setup.logs / "default.log") if "/default/line" in x), None),
        what="the request in the default-format log",
    )
    assert '"GET /default/line HTTP/1.1" 200' in line


def test_a_grpc_sink_streams_entries_to_the_access_log_service(setup: Setup) -> None:
    assert _status(setup.logged, "/grpc/entry", **{"x-tag": "streamed"}) == 200

    def entry() -> Any:
        for name, log in setup.receiver.entries:
            if log.request.path == "/grpc/entry":
                return name, log
        return None

    name, log = wait_until(entry, timeout=30, what="the entry at the access log service")
    assert name == "gw-test"
    assert log.response.response_code.value == 200
    assert log.request.request_method == 1  # GET
    assert dict(log.request.request_headers) == {"x-tag": "streamed"}
    assert log.common_properties.upstream_cluster == "app_default"


def test_the_listener_logs_connections_it_ends_itself(setup: Setup) -> None:
    """A connection without the PROXY protocol header the listener requires never reaches
    HTTP: only the listener's own access log sees it."""
    answers: list[Any] = []
    try:
        answers = send(setup.proxied, get("/", "Host: app.test"), to_the_end=True, timeout=5)
    except (OSError, AssertionError):
        pass  # closed without an answer, as expected
    assert not answers
    entry = wait_until(
        lambda: next((json.loads(x) for x in _lines(setup.logs / "connections.json")), None),
        what="the refused connection's entry",
    )
    assert entry["client"] == "127.0.0.1"


def test_an_opentelemetry_sink_sends_log_records_to_the_collector(setup: Setup) -> None:
    """gw makes the collector's cluster from its endpoint; the record's body and attributes
    carry the operators' values."""
    assert _status(setup.logged, "/otel/record", **{"x-tag": "collected"}) == 200

    def record() -> Any:
        return next(
            (r for r in setup.collector.records if "/otel/record" in r.body.string_value), None
        )

    found = wait_until(record, timeout=30, what="the record at the OpenTelemetry collector")
    assert found.body.string_value == "GET /otel/record 200"
    attributes = {a.key: a.value.string_value for a in found.attributes}
    assert attributes["tag"] == "collected"
