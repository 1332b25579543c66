"""Route matchers and options end to end through Envoy: exact/regex/header/method/query
matchers, prefixRewrite, hostRewrite, timeout, retries, CORS (virtual host, route
override, disableForRoute) and options kept in VirtualHostOption / RouteOption resources.

Upstreams are `gw echo` processes (`alpha`, `beta`); a request asks echo to misbehave
(`x-echo-fail-first`, `x-echo-delay-ms`) to exercise retries and timeouts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.support.manifests import upstream
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

HOST = "opts.example.com"
VS_KEY = "VirtualService default.opts"
APP_ORIGIN = "https://app.example.com"

CONFIG = """
apiVersion: gateway.vendor.io/v1
kind: VirtualHostOption
metadata: {{name: platform, namespace: default}}
spec:
  options:
    headerManipulation:
      responseHeadersToAdd: [{{header: {{key: x-platform, value: from-ref}}}}]
    cors: {{allowOrigin: [https://ignored.example.com]}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteOption
metadata: {{name: rewrite-to-ref, namespace: default}}
spec:
  options:
    prefixRewrite: /from-ref/
    headerManipulation:
      requestHeadersToAdd: [{{header: {{key: x-route-ref, value: "yes"}}}}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: opts, namespace: default}}
spec:
  virtualHost:
    domains: [{host}]
    options:
      cors:
        allowOrigin: [{origin}]
        allowOriginRegex: ['https://[a-z]+\\.example\\.org']
        allowMethods: [GET, POST]
        allowHeaders: [content-type, x-requested-with]
        exposeHeaders: [x-request-id]
        maxAge: "600"
      retries: {{retryOn: retriable-status-codes, numRetries: 1, retriableStatusCodes: [409]}}
    optionsConfigRefs:
      delegateOptions: [{{name: platform}}]
    routes:
      - matchers: [{{exact: /exact}}]
        routeAction: {{single: {{upstream: {{name: beta}}}}}}
      - matchers: [{{regex: "/items/[0-9]+"}}]
        routeAction: {{single: {{upstream: {{name: beta}}}}}}
      - matchers: [{{prefix: /match, headers: [{{name: x-version, value: v2}}]}}]
        routeAction: {{single: {{upstream: {{name: beta}}}}}}
      - matchers: [{{prefix: /match, methods: [POST, PUT]}}]
        routeAction: {{single: {{upstream: {{name: beta}}}}}}
      - matchers: [{{prefix: /match, queryParameters: [{{name: variant, value: b}}]}}]
        routeAction: {{single: {{upstream: {{name: beta}}}}}}
      - matchers: [{{prefix: /rewrite/}}]
        options: {{prefixRewrite: /, hostRewrite: rewritten.example.com}}
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /slow}}]
        options: {{timeout: 0.3s}}
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /retry}}]
        options:
          retries: {{retryOn: 5xx, numRetries: 2, retryBackOff: {{baseInterval: 5ms}}}}
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /public}}]
        options:
          cors: {{allowOrigin: ["*"], allowMethods: [GET]}}
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /internal}}]
        options:
          cors: {{disableForRoute: true}}
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /ref-inline/}}]
        options: {{prefixRewrite: /inline/}}
        optionsConfigRefs:
          delegateOptions: [{{name: rewrite-to-ref}}]
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /ref/}}]
        optionsConfigRefs:
          delegateOptions: [{{name: rewrite-to-ref}}]
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: alpha}}}}}}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    work = tmp_path_factory.mktemp("route-options")
    alpha, beta = Echo(work, "alpha"), Echo(work, "beta")
    try:
        folder = work / "config"
        folder.mkdir()
        (folder / "upstreams.yaml").write_text(
            upstream("alpha", alpha.port) + "---" + upstream("beta", beta.port)
        )
        (folder / "opts.yaml").write_text(CONFIG.format(host=HOST, origin=APP_ORIGIN))
        up = GwUp(folder, work / "home")
        try:
            up.wait_status(VS_KEY, "Accepted")
            yield up
        finally:
            up.stop()
    finally:
        alpha.stop()
        beta.stop()


def send(gw: GwUp, path: str, method: str = "GET", **kwargs: object) -> httpx.Response:
    headers = {"host": HOST, **dict(kwargs.pop("headers", {}) or {})}  # type: ignore[call-overload]
    return httpx.request(method, gw.url + path, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


def name_of(response: httpx.Response) -> str:
    assert response.status_code == 200, (response.status_code, response.text)
    return str(response.headers["x-echo-name"])


def test_statuses_of_the_options_resources(gw: GwUp) -> None:
    assert gw.status("VirtualHostOption default.platform")["state"] == "Accepted"  # type: ignore[index]
    assert gw.status("RouteOption default.rewrite-to-ref")["state"] == "Accepted"  # type: ignore[index]


def test_exact_and_regex_matchers(gw: GwUp) -> None:
    assert name_of(send(gw, "/exact")) == "beta"
    assert name_of(send(gw, "/exact/more")) == "alpha"
    assert name_of(send(gw, "/exact?q=1")) == "beta"  # the query is not part of the path
    assert name_of(send(gw, "/items/42")) == "beta"
    assert name_of(send(gw, "/items/abc")) == "alpha"  # the regex must match the whole path


def test_header_method_and_query_matchers(gw: GwUp) -> None:
    assert name_of(send(gw, "/match")) == "alpha"
    assert name_of(send(gw, "/match", headers={"x-version": "v2"})) == "beta"
    assert name_of(send(gw, "/match", headers={"x-version": "v1"})) == "alpha"
    assert name_of(send(gw, "/match", method="PUT")) == "beta"
    assert name_of(send(gw, "/match", method="DELETE")) == "alpha"
    assert name_of(send(gw, "/match?variant=b")) == "beta"
    assert name_of(send(gw, "/match?variant=a")) == "alpha"


def test_prefix_and_host_rewrite(gw: GwUp) -> None:
    body = send(gw, "/rewrite/a/b?x=1").json()
    assert body["path"] == "/a/b" and body["query"] == "x=1"
    assert body["headers"]["host"] == "rewritten.example.com"


def test_timeout_answers_504(gw: GwUp) -> None:
    response = send(gw, "/slow", headers={"x-echo-delay-ms": "2000"})
    assert response.status_code == 504
    assert response.text == "upstream request timeout"
    assert name_of(send(gw, "/slow", headers={"x-echo-delay-ms": "10"})) == "alpha"


def test_retries_hide_an_upstream_that_fails_first(gw: GwUp) -> None:
    key = uuid.uuid4().hex
    fail_twice = {"x-echo-fail-first": "2", "x-echo-key": key}
    response = send(gw, "/retry", headers=fail_twice)
    assert name_of(response) == "alpha"
    assert response.headers["x-echo-attempt"] == "3"
    # Three failures are one more than two retries can hide.
    response = send(gw, "/retry", headers={"x-echo-fail-first": "3", "x-echo-key": key + "-3"})
    assert response.status_code == 503
    assert response.headers["x-echo-attempt"] == "3"
    # The route's policy replaces the virtual host's: a 409 is not retried here.
    conflict = {"x-echo-fail-first": "1", "x-echo-fail-status": "409"}
    response = send(gw, "/retry", headers={**conflict, "x-echo-key": key + "-409"})
    assert response.status_code == 409


def test_virtual_host_retries_apply_to_routes_without_their_own(gw: GwUp) -> None:
    key = uuid.uuid4().hex
    conflict = {"x-echo-fail-first": "1", "x-echo-fail-status": "409", "x-echo-key": key}
    response = send(gw, "/other", headers=conflict)
    assert name_of(response) == "alpha"
    assert response.headers["x-echo-attempt"] == "2"
    # 503 is not among the host's retriable status codes: the first failure reaches the client.
    response = send(gw, "/other", headers={"x-echo-fail-first": "1", "x-echo-key": key + "-n"})
    assert response.status_code == 503
    assert response.headers["x-echo-attempt"] == "1"


def preflight(gw: GwUp, path: str, origin: str) -> httpx.Response:
    return send(
        gw,
        path,
        method="OPTIONS",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )


def test_cors_preflight_from_an_allowed_origin(gw: GwUp) -> None:
    response = preflight(gw, "/anything", APP_ORIGIN)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == APP_ORIGIN
    assert response.headers["access-control-allow-methods"] == "GET,POST"
    assert response.headers["access-control-allow-headers"] == "content-type,x-requested-with"
    assert response.headers["access-control-max-age"] == "600"
    assert "x-echo-name" not in response.headers  # Envoy answered; the upstream never saw it
    regex_origin = "https://shop.example.org"
    response = preflight(gw, "/anything", regex_origin)
    assert response.headers["access-control-allow-origin"] == regex_origin


def test_cors_simple_request_gets_expose_headers(gw: GwUp) -> None:
    response = send(gw, "/anything", headers={"origin": APP_ORIGIN})
    assert name_of(response) == "alpha"
    assert response.headers["access-control-allow-origin"] == APP_ORIGIN
    assert response.headers["access-control-expose-headers"] == "x-request-id"


def test_cors_disallowed_origin_gets_no_cors_headers(gw: GwUp) -> None:
    response = preflight(gw, "/anything", "https://evil.example.net")
    assert "access-control-allow-origin" not in response.headers
    # The inline policy wins over the one of the VirtualHostOption.
    response = preflight(gw, "/anything", "https://ignored.example.com")
    assert "access-control-allow-origin" not in response.headers


def test_cors_route_policy_wins_over_the_virtual_host_one(gw: GwUp) -> None:
    """Envoy reads each CORS field from the most specific policy that sets it: the route's
    origins and methods win, its unset max age falls back to the virtual host's."""
    response = preflight(gw, "/public", "https://anyone.example.net")
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "https://anyone.example.net"
    assert response.headers["access-control-allow-methods"] == "GET"
    assert response.headers["access-control-max-age"] == "600"


def test_cors_disabled_for_route(gw: GwUp) -> None:
    response = preflight(gw, "/internal", APP_ORIGIN)
    assert "access-control-allow-origin" not in response.headers
    assert name_of(response) == "alpha"  # the preflight went through to the upstream


def test_options_refs_merge_under_inline_options(gw: GwUp) -> None:
    # The VirtualHostOption adds a response header to every route of the host.
    response = send(gw, "/anything")
    assert response.headers["x-platform"] == "from-ref"
    # The route's own prefixRewrite wins; the RouteOption still adds its header.
    body = send(gw, "/ref-inline/x").json()
    assert body["path"] == "/inline/x"
    assert body["headers"]["x-route-ref"] == "yes"
    body = send(gw, "/ref/x").json()
    assert body["path"] == "/from-ref/x"


def test_a_rejected_options_resource_keeps_the_last_accepted_host(gw: GwUp) -> None:
    path = gw.folder / "opts.yaml"
    original = path.read_text()
    bad = original.replace(
        "cors: {allowOrigin: [https://ignored.example.com]}", "cors: {allowMethods: [GET]}"
    )
    assert bad != original
    path.write_text(bad)
    try:
        status = gw.wait_status("VirtualHostOption default.platform", "Rejected")
        assert "must provide at least one of AllowOrigin or AllowOriginRegex" in status["reason"]
        vs = gw.wait_status(VS_KEY, "Rejected")
        assert "VirtualHostOption default.platform is rejected" in vs["reason"]
        assert send(gw, "/anything").headers["x-platform"] == "from-ref"
    finally:
        path.write_text(original)
        gw.wait_status(VS_KEY, "Accepted")
    wait_until(lambda: name_of(send(gw, "/exact")) == "beta", what="the restored host")
