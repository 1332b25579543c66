"""External processing end to end: Settings `extProcEarly` and `extProcLate` name two gRPC
processors (test peers outside the product, `tests/support/ext_processor.py`: they add and
remove headers as told), Envoy's ext_proc filters call them on every request, a route
switches one off and another overrides its processing mode; and the established gateway's
header-manipulation guide (the `instructions` header) through real Envoy.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.ext_processor import ExtProcessor
from tests.support.manifests import upstream
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp

pytestmark = pytest.mark.e2e
Setup = tuple[GwUp, ExtProcessor, ExtProcessor]

HOST = "proc.example.com"
SETTINGS = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: early-ext-proc, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {early}}}]}}}}
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: late-ext-proc, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {late}}}]}}}}
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: dead-ext-proc, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {dead}}}]}}, useHttp2: true}}
---
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extProcEarly:
    grpcService: {{extProcServerRef: {{name: early-ext-proc, namespace: gw-system}}}}
    filterStage: {{stage: AuthNStage, predicate: Before}}
    failureModeAllow: false
    processingMode: {{requestHeaderMode: SEND, responseHeaderMode: SEND}}
  extProcLate:
    grpcService: {{extProcServerRef: {{name: late-ext-proc, namespace: gw-system}}}}
    processingMode: {{requestHeaderMode: SEND, responseHeaderMode: SKIP}}
"""
VIRTUAL_SERVICE = f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: proc, namespace: default}}
spec:
  virtualHost:
    domains: [{HOST}]
    routes:
      - matchers: [{{prefix: /quiet}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
        options:
          extProcEarly: {{disabled: true}}
      - matchers: [{{prefix: /no-response}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
        options:
          extProcEarly:
            overrides:
              processingMode: {{requestHeaderMode: SEND, responseHeaderMode: SKIP}}
      - matchers: [{{prefix: /dead}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
        options:
          extProcEarly:
            overrides:
              grpcService: {{extProcServerRef: {{name: dead-ext-proc, namespace: gw-system}}}}
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    work = tmp_path_factory.mktemp("extproc")
    early, late, app = ExtProcessor("early"), ExtProcessor("late"), Echo(work, "app")
    try:
        folder = work / "config"
        folder.mkdir()
        (folder / "settings.yaml").write_text(
            SETTINGS.format(early=early.port, late=late.port, dead=free_port())
        )
        (folder / "app.yaml").write_text(upstream("app", app.port) + "---" + VIRTUAL_SERVICE)
        up = GwUp(folder, work / "home")
        try:
            up.wait_status("VirtualService default.proc", "Accepted")
            up.wait_status("Settings gw-system.default", "Accepted")
            yield up, early, late
        finally:
            up.stop()
    finally:
        for peer in (early, late, app):
            peer.stop()


def get(gw: GwUp, path: str, **headers: str) -> httpx.Response:
    return httpx.get(gw.url + path, headers={"host": HOST, **headers}, timeout=10)


def upstream_headers(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 200, (response.status_code, response.text)
    headers: dict[str, str] = response.json()["headers"]
    return headers


def test_both_processors_change_the_request(setup: Setup) -> None:
    gw, _, _ = setup
    response = get(gw, "/orders")
    headers = upstream_headers(response)
    assert headers["x-ext-proc-early"] == "/orders"
    assert headers["x-ext-proc-late"] == "/orders"
    assert response.headers["x-ext-proc-early-response"] == "yes"
    assert "x-ext-proc-late-response" not in response.headers  # its responseHeaderMode: SKIP


def test_the_late_processor_sees_what_the_early_one_did(setup: Setup) -> None:
    gw, _, late = setup
    upstream_headers(get(gw, "/order", **{"x-mark": "late-check"}))
    seen = [h for h in late.seen if h.get("x-mark") == "late-check"]
    assert seen and seen[0]["x-ext-proc-early"] == "/order"


def test_header_manipulation_guide(setup: Setup) -> None:
    gw, _, _ = setup
    instructions = (
        '{"addHeaders":{"header3":"value3","header4":"value4"},'
        '"removeHeaders":["instructions", "header2"]}'
    )
    headers = upstream_headers(
        get(gw, "/get", header1="value1", header2="value2", instructions=instructions)
    )
    assert headers["header1"] == "value1"
    assert headers["header3"] == "value3" and headers["header4"] == "value4"
    assert "header2" not in headers and "instructions" not in headers


def test_a_route_switches_a_processor_off(setup: Setup) -> None:
    gw, early, _ = setup
    before = len(early.seen)
    response = get(gw, "/quiet")
    headers = upstream_headers(response)
    assert "x-ext-proc-early" not in headers
    assert headers["x-ext-proc-late"] == "/quiet"  # the other processor still runs
    assert "x-ext-proc-early-response" not in response.headers
    assert all(seen.get(":path") != "/quiet" for seen in early.seen[before:])


def test_a_route_overrides_the_processing_mode(setup: Setup) -> None:
    gw, _, _ = setup
    response = get(gw, "/no-response")
    assert upstream_headers(response)["x-ext-proc-early"] == "/no-response"
    assert "x-ext-proc-early-response" not in response.headers


def test_a_processor_that_cannot_be_reached_fails_the_request(setup: Setup) -> None:
    gw, _, _ = setup
    response = get(gw, "/dead")  # the route's override names a processor nobody serves
    assert response.status_code == 500
    assert upstream_headers(get(gw, "/alive"))["x-ext-proc-early"] == "/alive"
