"""Settings through real Envoy: `gloo.invalidConfigPolicy.replaceInvalidRoutes` (a route gw
cannot build answers the policy's response, and the rest of its VirtualService keeps
updating), `gloo.disableGrpcWeb`, and a warning per field gw does not act on. One `gw up`
on a folder the tests edit; `gw echo` is the upstream."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.manifests import upstream
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

SETTINGS = """
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec:
  refreshRate: 60s
  gloo:
    xdsBindAddr: 0.0.0.0:9977
    disableGrpcWeb: true
    invalidConfigPolicy:
      replaceInvalidRoutes: true
      invalidRouteResponseCode: 404
      invalidRouteResponseBody: gw has invalid configuration
"""


def routes(*extra: str) -> str:
    listed = "".join(extra)
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: app, namespace: default}}
spec:
  virtualHost:
    domains: ["*"]
    routes:
    - matchers: [{{prefix: /good}}]
      routeAction: {{single: {{upstream: {{name: app, namespace: default}}}}}}
    - matchers: [{{prefix: /bad}}]
      routeAction: {{single: {{upstream: {{name: does-not-exist, namespace: default}}}}}}
    - matchers: [{{prefix: /grpc}}]
      routeAction: {{single: {{upstream: {{name: grpc, namespace: default}}}}}}
{listed}"""


#: An HTTP/2 upstream the listener routes to (never called): without one, gw leaves
#: gRPC-Web off on the listener whatever the Settings say, since it could not work there.
GRPC_UPSTREAM = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: grpc, namespace: default}}
spec: {{useHttp2: true, static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}}}
"""


@dataclass
class Setup:
    gw: GwUp
    folder: Path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("settings")
    echo = Echo(root, "app")
    folder = root / "config"
    folder.mkdir()
    (folder / "settings.yaml").write_text(SETTINGS)
    (folder / "app.yaml").write_text(upstream("app", echo.port) + "---" + routes())
    (folder / "grpc.yaml").write_text(GRPC_UPSTREAM.format(port=echo.port))
    try:
        gw = GwUp(folder, root / "home")
        try:
            wait_until(lambda: gw.get("/good").status_code == 200, what="the good route")
            yield Setup(gw, folder)
        finally:
            gw.stop()
    finally:
        echo.stop()


def test_a_route_to_a_missing_upstream_answers_the_policys_response(setup: Setup) -> None:
    answer = setup.gw.get("/bad")
    assert (answer.status_code, answer.text) == (404, "gw has invalid configuration")
    assert setup.gw.get("/good").headers["x-echo-name"] == "app"
    status = setup.gw.wait_status("VirtualService default.app", "Warning")
    assert "the route answers 404 instead" in status["reason"]


def test_a_broken_route_does_not_hold_back_the_rest_of_its_virtual_service(
    setup: Setup,
) -> None:
    """A new route and a broken one arrive together: without the policy the VirtualService
    would be rejected and keep its last version; with it, the new route serves at once and
    the broken one answers the policy's response."""
    broken = """
    - matchers: [{exact: /two-actions}]
      routeAction: {single: {upstream: {name: app, namespace: default}}}
      directResponseAction: {status: 200}
"""
    added = """
    - matchers: [{prefix: /new}]
      directResponseAction: {status: 200, body: new}
"""
    (setup.folder / "app.yaml").write_text(
        (setup.folder / "app.yaml").read_text().split("---")[0] + "---" + routes(broken, added)
    )
    wait_until(lambda: setup.gw.get("/new").text == "new", what="the new route")
    assert setup.gw.get("/two-actions").status_code == 404
    status = setup.gw.status("VirtualService default.app")
    assert status is not None and status["state"] == "Warning"


def test_grpc_web_switched_off_in_settings(setup: Setup) -> None:
    """No gateway says, so the Settings' gloo.disableGrpcWeb holds: a gRPC-Web request goes
    to the upstream as it is (the echo answers it as plain HTTP)."""
    answer = httpx.post(
        setup.gw.url + "/good",
        content=b"\x00" + struct.pack(">I", 2) + b"hi",
        headers={"content-type": "application/grpc-web+proto"},
        timeout=5,
    )
    assert answer.headers["x-echo-name"] == "app"
    assert answer.json()["headers"]["content-type"] == "application/grpc-web+proto"


def test_fields_gw_does_not_act_on_warn(setup: Setup) -> None:
    status = setup.gw.wait_status("Settings gw-system.default", "Warning")
    assert "spec.gloo.xdsBindAddr: no effect under gw" in status["reason"]
    assert "spec.refreshRate: no effect" in status["reason"]
