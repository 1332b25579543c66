"""Transformations and header manipulation end to end: `gw up`, real Envoy, and a `gw echo`
upstream whose JSON body shows exactly which headers arrived.

One `gw up` serves the whole module; each test sends its own requests.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.processes import Echo, GwUp

pytestmark = pytest.mark.e2e

HOST = "transform.example.com"
VS_KEY = "VirtualService default.transform"

CONFIG = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: echo, namespace: gw-system}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {port}}}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: transform, namespace: default}}
spec:
  virtualHost:
    domains: [transform.example.com]
    options:
      stagedTransformations:
        early:
          requestTransforms:
            - requestTransformation:
                transformationTemplate:
                  extractors:
                    org: {{header: x-user-info, regex: '.*org=([a-z0-9-]+).*', subgroup: 1}}
                    user: {{header: x-user-info, regex: 'user=(\\w+);.*', subgroup: 1}}
                    strict: {{header: x-strict, regex: 'org=(\\w+)', subgroup: 1}}
                    query: {{header: ':path', regex: '.*[?&]foo=([^&]*).*', subgroup: 1}}
                    masked:
                      {{header: x-card, regex: '\\d', mode: REPLACE_ALL, replacementText: '*'}}
                  headers:
                    x-org: {{text: 'org-{{{{ org }}}}-end'}}
                    x-org-only: {{text: '{{{{org}}}}'}}
                    x-both: {{text: '{{{{ user }}}}@{{{{org}}}}'}}
                    x-twice: {{text: '{{{{org}}}}{{{{ org }}}}/{{{{  org  }}}}'}}
                    x-strict: {{text: '[{{{{ strict }}}}]'}}
                    x-query: {{text: '{{{{ query }}}}'}}
                    x-masked: {{text: '{{{{ masked }}}}'}}
                    x-agent: {{text: 'ua={{{{ header("user-agent") }}}} 100%'}}
                  headersToAppend:
                    - {{key: x-tags, value: {{text: 'org:{{{{ org }}}}'}}}}
                  headersToRemove: [x-secret]
        regular:
          requestTransforms:
            - requestTransformation:
                transformationTemplate:
                  extractors:
                    early_org: {{header: x-org, regex: 'org-(.*)-end', subgroup: 1}}
                  headers:
                    x-regular: {{text: 'saw [{{{{ early_org }}}}]'}}
      headerManipulation:
        requestHeadersToAdd:
          - header: {{key: x-added, value: gw}}
          - header: {{key: x-replaced, value: new}}
            append: false
          - header: {{key: x-client, value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%'}}
        requestHeadersToRemove: [x-remove-me]
        responseHeadersToAdd:
          - header: {{key: x-served-by, value: gw}}
        responseHeadersToRemove: [x-echo-name]
    routes:
      - matchers: [{{prefix: /own}}]
        options:
          stagedTransformations:
            early:
              requestTransforms:
                - requestTransformation:
                    transformationTemplate:
                      extractors:
                        org: {{header: x-user-info, regex: '.*org=(\\w+).*', subgroup: 1}}
                      headers:
                        x-route: {{text: 'own {{{{ org }}}}'}}
          headerManipulation:
            requestHeadersToAdd:
              - header: {{key: x-replaced, value: route}}
                append: false
            requestHeadersToRemove: [x-route-remove]
        routeAction: {{single: {{upstream: {{name: echo, namespace: gw-system}}}}}}
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: echo, namespace: gw-system}}}}}}
"""

BAD_REGEX = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: broken, namespace: default}
spec:
  virtualHost:
    domains: [broken.example.com]
    options:
      stagedTransformations:
        early:
          requestTransforms:
            - requestTransformation:
                transformationTemplate:
                  extractors:
                    bad: {header: x-a, regex: '(unclosed', subgroup: 1}
                  headers:
                    x-b: {text: '{{ bad }}'}
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200, body: broken}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    work = tmp_path_factory.mktemp("transform")
    echo = Echo(work, "echo")
    try:
        folder = work / "config"
        folder.mkdir()
        (folder / "gateway.yaml").write_text(CONFIG.format(port=echo.port))
        up = GwUp(folder, work / "home")
        try:
            up.wait_status(VS_KEY, "Accepted")
            yield up
        finally:
            up.stop()
    finally:
        echo.stop()


def send(gw: GwUp, path: str = "/", headers: Any = None) -> httpx.Response:
    """GET through the proxy; `headers` may be a dict or a list of pairs (repeats)."""
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    pairs.append(("host", HOST))
    response = httpx.get(gw.url + path, headers=pairs, timeout=10)
    assert response.status_code == 200, (response.status_code, response.text)
    return response


def arrived(gw: GwUp, path: str = "/", headers: Any = None) -> dict[str, str]:
    """The request headers the upstream received."""
    received: dict[str, str] = send(gw, path, headers).json()["headers"]
    return received


def test_extracts_a_subgroup_into_a_new_header_with_text_around_it(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-user-info": "user=alice;org=acme-7;role=admin"})
    assert got["x-org"] == "org-acme-7-end"
    assert got["x-org-only"] == "acme-7"


def test_no_match_gives_an_empty_value(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-user-info": "user=bob;role=guest"})
    assert got["x-org"] == "org--end"
    assert "x-org-only" not in got  # the whole template is empty: no header
    assert got["x-both"] == "bob@"


def test_missing_header_gives_an_empty_value(gw: GwUp) -> None:
    got = arrived(gw)
    assert got["x-org"] == "org--end"
    assert "x-org-only" not in got
    assert got["x-both"] == "@"
    assert got["x-strict"] == "[]"


def test_two_extractors_in_one_template(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-user-info": "user=carol;org=globex"})
    assert got["x-both"] == "carol@globex"


def test_spaces_are_optional_and_an_extractor_can_be_used_several_times(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-user-info": "org=initech"})
    assert got["x-twice"] == "initechinitech/initech"


def test_the_regex_must_match_the_whole_value(gw: GwUp) -> None:
    assert arrived(gw, headers={"x-strict": "org=acme"})["x-strict"] == "[acme]"
    assert arrived(gw, headers={"x-strict": "org=acme;more"})["x-strict"] == "[]"
    assert arrived(gw, headers={"x-strict": "my org=acme"})["x-strict"] == "[]"


def test_a_generated_header_replaces_what_the_client_sent(gw: GwUp) -> None:
    spoofed = [
        ("x-user-info", "org=acme"),
        ("x-org", "spoofed-1"),
        ("x-org", "spoofed-2"),
        ("x-org-only", "spoofed"),
    ]
    got = arrived(gw, headers=spoofed)
    assert got["x-org"] == "org-acme-end"
    assert got["x-org-only"] == "acme"


def test_a_client_copy_does_not_pass_when_nothing_is_extracted(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-user-info": "user=mallory", "x-org-only": "admin-org"})
    assert "x-org-only" not in got


def test_headers_to_append_keep_the_client_value(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-user-info": "org=acme", "x-tags": "client"})
    assert got["x-tags"] == "client, org:acme"
    assert arrived(gw, headers={"x-user-info": "org=acme"})["x-tags"] == "org:acme"


def test_headers_to_remove_and_request_header_references(gw: GwUp) -> None:
    got = arrived(
        gw, "/search?q=1&foo=bar%20baz", {"x-secret": "s3cr3t", "user-agent": "probe/1.0"}
    )
    assert "x-secret" not in got
    assert got["x-query"] == "bar%20baz"
    assert got["x-agent"] == "ua=probe/1.0 100%"


def test_replace_all_mode(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-card": "4111-2222"})
    assert got["x-masked"] == "****-****"
    assert got["x-card"] == "4111-2222"


def test_regular_stage_runs_after_the_early_stage(gw: GwUp) -> None:
    """The regular stage reads x-org as the early stage wrote it (a client copy is gone)."""
    got = arrived(gw, headers={"x-user-info": "org=umbrella", "x-org": "org-fake-end"})
    assert got["x-regular"] == "saw [umbrella]"
    assert arrived(gw)["x-regular"] == "saw []"


def test_route_transformations_replace_the_virtual_host_ones(gw: GwUp) -> None:
    got = arrived(gw, "/own", {"x-user-info": "org=acme", "x-route-remove": "1", "x-org": "c"})
    assert got["x-route"] == "own acme"
    assert got["x-org"] == "c"  # the host's early stage does not run on this route
    assert "x-regular" not in got  # nor its regular stage
    assert "x-route-remove" not in got  # route-level header removal
    assert got["x-added"] == "gw"  # host-level header manipulation still applies
    assert got["x-replaced"] == "new"  # and is applied after the route's, so it wins


def test_header_manipulation_adds_and_removes_request_headers(gw: GwUp) -> None:
    got = arrived(gw, headers={"x-added": "client", "x-replaced": "old", "x-remove-me": "please"})
    assert got["x-added"] == "client, gw"
    assert got["x-replaced"] == "new"
    assert got["x-client"] == "127.0.0.1"
    assert "x-remove-me" not in got


def test_header_manipulation_adds_and_removes_response_headers(gw: GwUp) -> None:
    response = send(gw)
    assert response.headers["x-served-by"] == "gw"
    assert "x-echo-name" not in response.headers
    assert response.json()["name"] == "echo"


def _rds_rejections(gw: GwUp) -> int:
    stats = httpx.get(
        gw.proxy_admin_url + "/stats", params={"filter": "rds.*update_rejected"}, timeout=5
    ).text
    counts = [int(line.rsplit(": ", 1)[1]) for line in stats.splitlines() if ": " in line]
    assert counts, "Envoy reports no RDS update counters"
    return sum(counts)


def test_bad_extractor_is_a_status_never_an_envoy_nack(gw: GwUp) -> None:
    bad = gw.folder / "broken.yaml"
    bad.write_text(BAD_REGEX)
    try:
        status = gw.wait_status("VirtualService default.broken", "Rejected")
        field = (
            "spec.virtualHost.options.stagedTransformations.early.requestTransforms[0]"
            ".requestTransformation.transformationTemplate.extractors.bad.regex"
        )
        assert f"{field}: invalid regex '(unclosed'" in status["reason"]
        assert httpx.get(gw.url + "/", headers={"host": "broken.example.com"}).status_code == 404
        assert gw.envoy_stat("listener_manager.lds.update_rejected") == 0
        assert _rds_rejections(gw) == 0
        assert arrived(gw, headers={"x-user-info": "org=acme"})["x-org"] == "org-acme-end"
    finally:
        bad.unlink()
