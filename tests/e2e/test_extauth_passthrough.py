"""`passThroughAuth` end to end, to a gRPC and to an HTTP authorization service the test
runs (tests/support/auth_services.py): headers to and from the service, the step's
`config`, state going to a service and coming back for the next step, `failureModeAllow`,
and services that are down or failing (fail closed: 503). Real `gw up` with its extauth
server, Envoy and an echo app.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format

from tests.support.auth_services import (
    ALLOW,
    CONFIG_NAMESPACE,
    STATE_NAMESPACE,
    GrpcAuthService,
    HttpAuthService,
)
from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.ports import free_port

pytestmark = pytest.mark.e2e

UNAVAILABLE = "passthrough auth service unavailable"


def auth_config(name: str, *steps: str) -> str:
    return chain(name, "".join(steps)) + "---"


def grpc_step(address: str, extra: str = "") -> str:
    return f"""
  - passThroughAuth:
      grpc: {{address: "{address}", connectionTimeout: 2s}}{extra}"""


def http_step(url: str, extra: str = "") -> str:
    return f"""
  - passThroughAuth:
      http:
        url: {url}
        request:
          allowedHeaders: [authorization, x-user]
          headersToAdd: {{x-from: gw}}
          passThroughState: true
        response:
          allowedUpstreamHeaders: [x-auth-user]
          allowedUpstreamHeadersToOverwrite: [x-auth-extra]
          allowedClientHeadersOnSuccess: [x-client-note]
          allowedClientHeadersOnDenied: [x-client-note]
          readStateFromResponse: true{extra}"""


KEY_STEP = """
  - apiKeyAuth: {headerName: x-key, apiKeySecretRefs: [{name: key, namespace: gw-system}]}"""
KEY_SECRET = """
apiVersion: v1
kind: Secret
metadata: {name: key, namespace: gw-system}
type: extauth.vendor.io/apikey
stringData: {api-key: the-key}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    started: list[Any] = []
    try:
        grpc_service = GrpcAuthService()
        started.append(grpc_service)
        http_service = HttpAuthService()
        started.append(http_service)
        gateway = ExtauthGateway(tmp_path_factory.mktemp("passthrough"))
        started.append(gateway)
        dead = f"127.0.0.1:{free_port()}"
        config = "\n      config: {customKey1: customConfigStringValue, customKey2: false}"
        allow_on_failure = "\n      failureModeAllow: true"
        configs = {
            "grpc": auth_config("grpc", grpc_step(grpc_service.address, config)),
            "http": auth_config("http", http_step(http_service.url + "/check")),
            "stateful": auth_config(
                "stateful",
                KEY_STEP,
                grpc_step(grpc_service.address),
                http_step(http_service.url + "/after-grpc"),
            ),
            "grpc-down": auth_config("grpc-down", grpc_step(dead)),
            "grpc-open": auth_config("grpc-open", grpc_step(dead, allow_on_failure)),
            "http-failing": auth_config("http-failing", http_step(http_service.url + "/fail")),
            "http-open": auth_config(
                "http-open", http_step(http_service.url + "/fail") + allow_on_failure
            ),
            "http-down": auth_config("http-down", http_step(f"http://{dead}/check")),
        }
        gateway.write("passthrough", KEY_SECRET + "---" + "".join(configs.values()))
        for name in configs:
            gateway.gw.wait_status(f"AuthConfig gw-system.{name}", "Accepted")
            gateway.guard(name, name)
        yield {"gateway": gateway, "grpc": grpc_service, "http": http_service}
    finally:
        for process in reversed(started):
            process.stop()


def test_grpc_service_decides(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    service: GrpcAuthService = env["grpc"]
    ok = gateway.get("grpc.test", "/posts/1", headers={"authorization": ALLOW, "x-user": "ann"})
    assert ok.status_code == 200 and ok.json()["headers"]["x-auth-user"] == "ann"
    asked = service.requests[-1]
    http = asked.attributes.request.http
    assert http.path == "/posts/1" and http.headers["x-user"] == "ann"  # the request as sent
    metadata = asked.attributes.metadata_context.filter_metadata
    assert json_format.MessageToDict(metadata[CONFIG_NAMESPACE]) == {
        "customKey1": "customConfigStringValue",
        "customKey2": False,
    }
    denied = gateway.get("grpc.test", "/posts/1")
    assert (denied.status_code, denied.text) == (401, "denied by the grpc service")
    quiet = gateway.get("grpc.test", "/", headers={"authorization": "deny quietly"})
    assert quiet.status_code == 403  # a denial without a status


def test_http_service_decides_with_the_headers_it_is_allowed(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    service: HttpAuthService = env["http"]
    headers = {"authorization": ALLOW, "x-user": "bo", "x-auth-extra": "client", "x-other": "no"}
    ok = gateway.get("http.test", "/p", headers=headers)
    assert ok.status_code == 200
    seen = ok.json()["headers"]
    assert seen["x-auth-user"] == "bo"  # appended (the client sent none)
    assert seen["x-auth-extra"] == "1"  # overwritten
    assert ok.headers["x-client-note"] == "seen"  # to the client on success
    sent = service.requests[-1]
    assert sent["path"] == "/check" and sent["method"] == "POST"
    assert sent["headers"]["authorization"] == ALLOW and sent["headers"]["x-from"] == "gw"
    assert "x-other" not in sent["headers"] and "x-auth-extra" not in sent["headers"]
    denied = gateway.get("http.test", "/p", headers={"x-user": "bo"})
    assert denied.status_code == 401 and denied.headers["x-client-note"] == "seen"
    assert "x-echo-name" not in denied.headers


def test_state_goes_through_both_services(env: dict[str, Any]) -> None:
    """API key → gRPC service (gets the state in its filter metadata, returns it with a
    mark) → HTTP service (gets that state in its body)."""
    gateway: ExtauthGateway = env["gateway"]
    headers = {"x-key": "the-key", "authorization": ALLOW}
    assert gateway.get("stateful.test", "/", headers=headers).status_code == 200
    asked = env["grpc"].requests[-1].attributes.metadata_context.filter_metadata
    assert json_format.MessageToDict(asked[STATE_NAMESPACE]) == {"api_key_value": "the-key"}
    state = env["http"].requests[-1]["body"]["state"]
    assert state == {"api_key_value": "the-key", "grpc_seen": True}


def test_unreachable_or_failing_services_fail_closed(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    headers = {"authorization": ALLOW}
    for host in ("grpc-down.test", "http-down.test", "http-failing.test"):
        answer = gateway.get(host, "/", headers=headers)
        assert (answer.status_code, answer.text) == (503, UNAVAILABLE), host
        assert answer.headers["retry-after"] == "5" and "x-echo-name" not in answer.headers
    assert gateway.gw.process.alive()


def test_failure_mode_allow(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    for host in ("grpc-open.test", "http-open.test"):
        answer = gateway.get(host, "/")
        assert answer.status_code == 200 and answer.headers["x-echo-name"] == "app", host
