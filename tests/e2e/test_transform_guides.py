"""The established gateway's transformation guides, through `gw up` and real Envoy.

Each VirtualService below is a guide's manifest as written (its upstream, the guides' public
echo service, is a local stand-in with the same answer shape, `tests/support/json_echo.py`;
each guide's `domains: ['*']` became a host of its own so that they can be served together),
and each test runs the guide's own requests and checks what the guide says they show.
"""

# ruff: noqa: E501 (the guides' manifests keep their long template lines)
from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.json_echo import gw_with_echo
from tests.support.processes import GwUp

pytestmark = pytest.mark.e2e

UPSTREAM = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: postman-echo, namespace: gw-system}
spec:
  static:
    hosts:
    - addr: 127.0.0.1
      port: __PORT__
"""

GUIDES = {
    "extract-query-params": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            extractors:
              foo:
                header: ':path'
                regex: '(.*foo=([^&]*).*)'
                subgroup: 2
              bar:
                header: ':path'
                regex: '(.*bar=([^&]*).*)'
                subgroup: 2
            headers:
              foo:
                text: '{{ foo }}'
              bar:
                text: '{{ bar }}'
""",
    "inject-response-header": """
    options:
      transformations:
        responseTransformation:
          transformationTemplate:
            headers:
              x-solo-resp-hdr1:
                text: '{{ request_header("x-solo-hdr1") }}'
""",
    "update-request-path": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            headers:
              ":path":
                text: '{% if header("foo") == "bar" %}/post{% else %}{{ header(":path") }}{% endif %}'
              ":method":
                text: '{% if header("foo") == "bar" %}POST{% else %}{{ header(":method") }}{% endif %}'
""",
    "decode-and-modify-header": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            headers:
              x-decoded-test:
                text: '{{substring(base64_decode(request_header("x-test")), 11)}}'
""",
    "headers-to-body": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            mergeExtractorsToBody: {}
            extractors:
              root:
                header: 'root'
                regex: '.*'
              payload.nested:
                header: 'nested'
                regex: '.*'
""",
    "update-response-code": """
    options:
      transformations:
        responseTransformation:
          transformationTemplate:
            headers:
              ":status":
                text: '{% if default(data.error.message, "") != "" %}400{% else %}{{ header(":status") }}{% endif %}'
""",
    "test-debug-logs": """
    options:
      stagedTransformations:
        early:
          requestTransforms:
          - requestTransformation:
              transformationTemplate:
                headers:
                  x-early-request-header:
                    text: "early"
        regular:
          requestTransforms:
          - requestTransformation:
              logRequestResponseInfo: true
              transformationTemplate:
                headers:
                  x-regular-request-header:
                    text: "regular"
""",
    "test-access-logs": """
    options:
      transformations:
        responseTransformation:
          transformationTemplate:
            dynamicMetadataValues:
            - key: 'pod_name'
              value:
                text: '{{ env("POD_NAME") }}'
            - key: 'endpoint_url'
              value:
                text: '{{ url }}'
""",
}


def _virtual_service(name: str, options: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata:
  name: {name}
  namespace: gw-system
spec:
  virtualHost:
    domains:
    - '{name}.example.com'
    routes:
    - matchers:
       - prefix: /
      routeAction:
        single:
          upstream:
            name: postman-echo
            namespace: gw-system
      options:
        autoHostRewrite: true
{options}"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    def manifests(port: int) -> list[str]:
        guides = [_virtual_service(name, options) for name, options in GUIDES.items()]
        return [UPSTREAM.replace("__PORT__", str(port)), *guides]

    accepted = [f"VirtualService gw-system.{name}" for name in GUIDES]
    work = tmp_path_factory.mktemp("transform-guides")
    with gw_with_echo(work, manifests, accepted, {"POD_NAME": "gateway-proxy-test-pod"}) as up:
        yield up


def send(gw: GwUp, guide: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"host": f"{guide}.example.com", **kwargs.pop("headers", {})}
    return httpx.request(
        kwargs.pop("method", "GET"), gw.url + path, headers=headers, timeout=10, **kwargs
    )


def test_extract_query_params(gw: GwUp) -> None:
    answer = send(gw, "extract-query-params", "/get?foo=foo-value&bar=bar-value")
    assert answer.status_code == 200
    headers = answer.json()["headers"]
    assert (headers["foo"], headers["bar"]) == ("foo-value", "bar-value")
    assert answer.json()["args"] == {"foo": "foo-value", "bar": "bar-value"}


def test_inject_response_header(gw: GwUp) -> None:
    answer = send(gw, "inject-response-header", "/get", headers={"x-solo-hdr1": "val1"})
    assert answer.status_code == 200
    assert answer.headers["x-solo-resp-hdr1"] == "val1"
    assert answer.json()["headers"]["x-solo-hdr1"] == "val1"


def test_update_request_path(gw: GwUp) -> None:
    changed = send(gw, "update-request-path", "/get", headers={"foo": "bar"})
    assert changed.json()["url"].endswith("/post")
    assert changed.json()["method"] == "POST"
    unchanged = send(gw, "update-request-path", "/get")
    assert unchanged.json()["url"].endswith("/get")
    assert unchanged.json()["method"] == "GET"


def test_decode_and_modify_base64_header(gw: GwUp) -> None:
    encoded = base64.b64encode(b"testprefix.testsuffix").decode()
    answer = send(gw, "decode-and-modify-header", "/get", headers={"x-test": encoded})
    assert answer.json()["headers"]["x-decoded-test"] == "testsuffix"
    assert answer.json()["headers"]["x-test"] == encoded


def test_add_headers_to_body(gw: GwUp) -> None:
    answer = send(
        gw,
        "headers-to-body",
        "/post",
        method="POST",
        headers={"content-type": "application/json", "root": "root-val", "nested": "nested-val"},
        content=b'{\n  "payload": {\n    "foo": "bar"\n  }\n}\n',
    )
    assert answer.status_code == 200
    assert answer.json()["data"] == {
        "payload": {"foo": "bar", "nested": "nested-val"},
        "root": "root-val",
    }


def test_change_response_status(gw: GwUp) -> None:
    error = b'{\n  "error": {\n    "message": "This is an error"\n  }\n}\n'
    post = {"method": "POST", "headers": {"content-type": "application/json"}}
    assert send(gw, "update-response-code", "/post", content=error, **post).status_code == 400
    empty = b'{\n  "error": {}\n}\n'
    assert send(gw, "update-response-code", "/post", content=empty, **post).status_code == 200


def test_debug_logging_stages(gw: GwUp) -> None:
    headers = send(gw, "test-debug-logs", "/get").json()["headers"]
    assert headers["x-early-request-header"] == "early"
    assert headers["x-regular-request-header"] == "regular"


def test_enrich_access_logs_is_served(gw: GwUp) -> None:
    """The response transformation runs without changing the answer (the metadata it writes
    is checked through a later filter in test_transform_templates.py)."""
    answer = send(gw, "test-access-logs", "/get")
    assert answer.status_code == 200
    assert answer.json()["url"].endswith("/get")
