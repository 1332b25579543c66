"""Tracing end to end: a Gateway's `httpConnectionManagerSettings.tracing` makes Envoy send
the spans of real requests to a collector named as an Upstream; a route's `tracing` names
its spans (`routeDescriptor`, `propagate`) and samples them (`tracePercentages`), and a
transformation's `spanTransformer` names them over `routeDescriptor`.

The collectors are test-side receivers (no Zipkin or OpenTelemetry collector runs here): a
small HTTP server taking Zipkin's JSON span lists on `/api/v2/spans`, and a gRPC server
implementing OpenTelemetry's `TraceService/Export`. What they receive is what Envoy sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import httpx
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2

from tests.support.manifests import upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


@dataclass
class ZipkinReceiver:
    """Collects the spans POSTed to `/api/v2/spans` (Zipkin v2 JSON)."""

    spans: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self._body()
                if self.path == "/api/v2/spans":
                    receiver.spans.extend(json.loads(body))
                self.send_response(202)
                self.send_header("content-length", "0")
                self.end_headers()

            def _body(self) -> bytes:
                """The request body, sized or chunked (Envoy sends spans chunked)."""
                if "content-length" in self.headers:
                    return self.rfile.read(int(self.headers["content-length"]))
                body = b""
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    body += self.rfile.read(size)
                    self.rfile.readline()
                self.rfile.readline()
                return body

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class OtelReceiver:
    """Collects the spans exported to `TraceService/Export` (OTLP over gRPC), with the
    `service.name` of the resource that sent them."""

    spans: list[tuple[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        def export(
            request: trace_service_pb2.ExportTraceServiceRequest, context: Any
        ) -> trace_service_pb2.ExportTraceServiceResponse:
            for resource_spans in request.resource_spans:
                service = _attributes(resource_spans.resource.attributes).get("service.name")
                for scope in _scope_spans(resource_spans):
                    self.spans.extend((service, span) for span in scope.spans)
            return trace_service_pb2.ExportTraceServiceResponse()

        handler = grpc.method_handlers_generic_handler(
            "opentelemetry.proto.collector.trace.v1.TraceService",
            {
                "Export": grpc.unary_unary_rpc_method_handler(
                    export,
                    request_deserializer=trace_service_pb2.ExportTraceServiceRequest.FromString,
                    response_serializer=trace_service_pb2.ExportTraceServiceResponse.SerializeToString,
                )
            },
        )
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        self.server.add_generic_rpc_handlers((handler,))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()

    def stop(self) -> None:
        self.server.stop(grace=None)


def _scope_spans(resource_spans: Any) -> Any:
    """Field 2 of `ResourceSpans`: `scope_spans` in today's OTLP, which Envoy sends; the older
    OTLP that xds-protos ships calls it `instrumentation_library_spans` (same wire shape)."""
    if "scope_spans" in resource_spans.DESCRIPTOR.fields_by_name:
        return resource_spans.scope_spans
    return resource_spans.instrumentation_library_spans


def _attributes(attributes: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for kv in attributes:
        value: common_pb2.AnyValue = kv.value
        out[kv.key] = value.string_value
    return out


@dataclass
class Setup:
    gw: GwUp
    zipkin: ZipkinReceiver
    otel: OtelReceiver
    ports: dict[str, int]


def manifests(zipkin: int, otel: int, echo: int, ports: dict[str, int]) -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: zipkin, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {zipkin}}}]}}}}
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: otel, namespace: gw-system}}
spec:
  useHttp2: true
  static: {{hosts: [{{addr: 127.0.0.1, port: {otel}}}]}}
---
{upstream("app", echo)}
---
{virtual_service("app", "*", "app")}
---
{ROUTE_TRACING}
---
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: zipkin, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {ports["zipkin"]}
  httpGateway:
    options:
      httpConnectionManagerSettings:
        tracing:
          requestHeadersForTags: [x-tenant]
          literalsForTags: [{{tag: tier, value: edge}}]
          tracePercentages: {{randomSamplePercentage: 100}}
          zipkinConfig:
            collectorUpstreamRef: {{name: zipkin, namespace: gw-system}}
            collectorEndpoint: /api/v2/spans
            collectorEndpointVersion: HTTP_JSON
---
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: otel, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {ports["otel"]}
  httpGateway:
    options:
      httpConnectionManagerSettings:
        tracing:
          literalsForTags: [{{tag: tier, value: edge}}]
          openTelemetryConfig:
            collectorUpstreamRef: {{name: otel, namespace: gw-system}}
            serviceName: gw-edge
"""


#: Routes with their own tracing, on the listeners above (host `traced.test`).
ROUTE_TRACING = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: traced, namespace: default}
spec:
  virtualHost:
    domains: [traced.test]
    routes:
      - matchers: [{prefix: /named}]
        routeAction: {single: {upstream: {name: app, namespace: default}}}
        options: {tracing: {routeDescriptor: checkout}}
      - matchers: [{prefix: /quiet}]
        routeAction: {single: {upstream: {name: app, namespace: default}}}
        options: {tracing: {routeDescriptor: quiet, propagate: false}}
      - matchers: [{prefix: /unsampled}]
        routeAction: {single: {upstream: {name: app, namespace: default}}}
        options:
          tracing:
            tracePercentages: {randomSamplePercentage: 0, clientSamplePercentage: 100}
      - matchers: [{prefix: /renamed}]
        routeAction: {single: {upstream: {name: app, namespace: default}}}
        options:
          tracing: {routeDescriptor: ignored}
          transformations:
            requestTransformation:
              transformationTemplate:
                spanTransformer: {name: {text: renamed-span}}
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("tracing")
    started: list[Any] = []
    try:
        zipkin = ZipkinReceiver()
        started.append(zipkin)
        otel = OtelReceiver()
        started.append(otel)
        echo = Echo(root, "app")
        started.append(echo)
        folder = root / "config"
        folder.mkdir()
        ports = {"zipkin": free_port(), "otel": free_port()}
        (folder / "all.yaml").write_text(manifests(zipkin.port, otel.port, echo.port, ports))
        gw = GwUp(folder, root / "home")
        started.append(gw)
        for name in ports:
            gw.wait_status(f"Gateway gw-system.{name}", "Accepted")
        gw.wait_status("VirtualService default.traced", "Warning")
        yield Setup(gw, zipkin, otel, ports)
    finally:
        for thing in reversed(started):
            thing.stop()


def _get(
    setup: Setup, gateway: str, path: str, host: str = "app.test", **headers: str
) -> httpx.Response:
    url = f"http://127.0.0.1:{setup.ports[gateway]}{path}"
    return wait_until(
        lambda: _ok(httpx.get(url, headers={"host": host, **headers}, timeout=5)),
        what=f"{gateway} to answer",
    )


def _ok(response: httpx.Response) -> httpx.Response | None:
    return response if response.status_code == 200 else None


def test_zipkin_receives_the_span_of_a_request(setup: Setup) -> None:
    response = _get(setup, "zipkin", "/zipkin-traced", **{"x-tenant": "acme"})
    trace_id = response.json()["headers"]["x-b3-traceid"]  # propagated to the upstream

    def span() -> dict[str, Any] | None:
        for found in setup.zipkin.spans:
            if found.get("tags", {}).get("http.url", "").endswith("/zipkin-traced"):
                return found
        return None

    found = wait_until(span, timeout=30, what="Envoy's span at the Zipkin receiver")
    assert found["traceId"] == trace_id
    assert found["tags"]["x-tenant"] == "acme"
    assert found["tags"]["tier"] == "edge"
    assert found["tags"]["http.status_code"] == "200"


def test_opentelemetry_receives_the_span_of_a_request(setup: Setup) -> None:
    _get(setup, "otel", "/otel-traced")

    def span() -> tuple[str, Any] | None:
        for service, found in setup.otel.spans:
            if _attributes(found.attributes).get("http.url", "").endswith("/otel-traced"):
                return service, found
        return None

    service, found = wait_until(span, timeout=30, what="Envoy's span at the OTLP receiver")
    assert service == "gw-edge"
    attributes = _attributes(found.attributes)
    assert attributes["tier"] == "edge"
    assert attributes["http.status_code"] == "200"


def _zipkin_span(setup: Setup, path: str) -> dict[str, Any]:
    def span() -> dict[str, Any] | None:
        for found in setup.zipkin.spans:
            if found.get("tags", {}).get("http.url", "").endswith(path):
                return found
        return None

    return wait_until(span, timeout=30, what=f"the span of {path} at the Zipkin receiver")


def test_route_descriptor_names_the_span_and_is_propagated(setup: Setup) -> None:
    """gw's listeners are ingress listeners: the name goes back to the client (the other
    party of the span), not to the upstream."""
    response = _get(setup, "zipkin", "/named", host="traced.test")
    assert response.headers["x-envoy-decorator-operation"] == "checkout"
    assert "x-envoy-decorator-operation" not in response.json()["headers"]
    assert _zipkin_span(setup, "/named")["name"] == "checkout"


def test_route_descriptor_without_propagation(setup: Setup) -> None:
    response = _get(setup, "zipkin", "/quiet", host="traced.test")
    assert "x-envoy-decorator-operation" not in response.headers
    assert _zipkin_span(setup, "/quiet")["name"] == "quiet"


def test_route_trace_percentages_sample_the_route(setup: Setup) -> None:
    """The listener samples every request; the route's 0% random sampling leaves its
    requests untraced unless the client asks (`x-client-trace-id`, 100% on this route)."""
    sent = _get(setup, "zipkin", "/unsampled", host="traced.test").json()["headers"]
    assert sent["x-b3-sampled"] == "0"
    asked = _get(
        setup, "zipkin", "/unsampled/asked", host="traced.test", **{"x-client-trace-id": "t-1"}
    )
    assert asked.json()["headers"]["x-b3-sampled"] == "1"
    assert (
        _zipkin_span(setup, "/unsampled/asked")["traceId"]
        == (asked.json()["headers"]["x-b3-traceid"])
    )
    assert not any(
        s.get("tags", {}).get("http.url", "").endswith("/unsampled") for s in setup.zipkin.spans
    )


def test_span_transformer_names_the_span_over_route_descriptor(setup: Setup) -> None:
    _get(setup, "zipkin", "/renamed", host="traced.test")
    assert _zipkin_span(setup, "/renamed")["name"] == "renamed-span"
    status = setup.gw.status("VirtualService default.traced")
    assert status is not None
    assert (
        "spec.virtualHost.routes[3].options.tracing.routeDescriptor: routeDescriptor 'ignored' "
        "has no effect: the route's transformation names the span 'renamed-span' "
        "(spanTransformer), which wins over routeDescriptor; remove one of them"
    ) in status["reason"]
