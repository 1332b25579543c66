"""Transformation templates compiled to Lua, end to end: `gw up`, real Envoy, and an echo
upstream that answers with the request it got (`tests/support/json_echo.py`).

One `gw up` serves every virtual service below; each test sends its own requests.
"""

# ruff: noqa: E501 (the guides' manifests keep their long template lines)
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.json_echo import gw_with_echo
from tests.support.manifests import upstream
from tests.support.processes import GwUp

pytestmark = pytest.mark.e2e

ROUTE = "routeAction: {single: {upstream: {name: echo, namespace: default}}}"

HOSTS: dict[str, str] = {
    # Extractors from headers and from the body, a body template reading JSON fields.
    "body": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            extractors:
              order: {body: {}, regex: '[\\s\\S]*"order": *"([A-Z]+-[0-9]+)"[\\s\\S]*', subgroup: 1}
              agent: {header: user-agent, regex: '([a-z]+)/.*', subgroup: 1}
              masked: {body: {}, regex: '[0-9]', mode: REPLACE_ALL, replacementText: '#'}
            headers:
              x-order: {text: '{{ order }}'}
              x-first-item: {text: '{{ items.0.name }}'}
            body:
              text: '{"who": "{{ user.name }}", "count": {{ length(items) }}, "order": "{{ order }}", "agent": "{{ agent }}", "sum": {{ items.0.price + items.1.price }}{% for i in items %}, "item{{ loop.index }}": "{{ upper(i.name) }}"{% endfor %}}'
    routes:
    - matchers: [{prefix: /masked}]
      options:
        transformations:
          requestTransformation:
            transformationTemplate:
              parseBodyBehavior: DontParse
              extractors:
                masked: {body: {}, regex: '[0-9]', mode: REPLACE_ALL, replacementText: '#'}
              body: {text: '{{ masked }}'}
      __ROUTE__
""",
    # Response templates: request_header(), the response's own headers and JSON body.
    "response": """
    options:
      transformations:
        responseTransformation:
          transformationTemplate:
            headers:
              x-asked-for: {text: '{{ request_header("x-ask") }}'}
              x-upstream-method: {text: '{{ method }}'}
            body:
              text: '{% if header(":status") == "200" %}ok {{ request_header("x-ask") }} via {{ method }}{% else if header(":status") == "404" %}missing{% else %}status {{ header(":status") }}{% endif %}'
""",
    # Headers only, body untouched and never parsed.
    "passthrough": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            passthrough: {}
            headers:
              x-length: {text: '{{ length(header("x-word")) }}'}
""",
    # JSON is parsed; a body that is not JSON is a 400 unless ignoreErrorOnParse.
    "strict": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            headers:
              x-name: {text: '{{ default(name, "none") }}'}
    routes:
    - matchers: [{prefix: /lenient}]
      options:
        transformations:
          requestTransformation:
            transformationTemplate:
              ignoreErrorOnParse: true
              headers:
                x-name: {text: '{{ default(name, "none") }}'}
      __ROUTE__
""",
    # Dynamic metadata read by a later filter: the router adds it as a request header.
    "metadata": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            dynamicMetadataValues:
            - key: tenant
              value: {text: '{{ header("x-tenant") }}-{{ env("POD_NAME") }}'}
            - metadataNamespace: com.example
              key: plan
              value: {text: 'gold'}
      headerManipulation:
        requestHeadersToAdd:
        - header: {key: x-seen-tenant, value: '%DYNAMIC_METADATA(io.vendor.transformation:tenant)%'}
        - header: {key: x-seen-plan, value: '%DYNAMIC_METADATA(com.example:plan)%'}
""",
    "headerbody": """
    options:
      transformations:
        requestTransformation:
          headerBodyTransform: {addRequestMetadata: true}
""",
    # clearRouteCache: the header the transformation sets picks another route.
    "reroute": """
    options:
      stagedTransformations:
        early:
          requestTransforms:
          - clearRouteCache: true
            requestTransformation:
              transformationTemplate:
                headers:
                  x-route: {text: '{% if header("x-plan") == "gold" %}gold{% endif %}'}
    routes:
    - matchers: [{prefix: /, headers: [{name: x-route, value: gold}]}]
      directResponseAction: {status: 200, body: gold route}
""",
    # Matchers pick the entry; inheritTransformation appends the host's entries.
    "match": """
    options:
      stagedTransformations:
        regular:
          requestTransforms:
          - matcher: {prefix: /api, headers: [{name: x-v, value: '[0-9]+', regex: true}]}
            requestTransformation:
              transformationTemplate:
                headers: {x-entry: {text: api}}
          - requestTransformation:
              transformationTemplate:
                headers: {x-entry: {text: host}}
    routes:
    - matchers: [{prefix: /child}]
      options:
        stagedTransformations:
          inheritTransformation: true
          regular:
            requestTransforms:
            - matcher: {prefix: /child/own}
              requestTransformation:
                transformationTemplate:
                  headers: {x-entry: {text: child}}
      __ROUTE__
""",
    "escape": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            body:
              text: '{"raw": "{{ raw_string(msg) }}", "plain": "{{ msg }}"}'
    routes:
    - matchers: [{prefix: /escaped}]
      options:
        stagedTransformations:
          escapeCharacters: true
          regular:
            requestTransforms:
            - requestTransformation:
                transformationTemplate:
                  body: {text: '{"msg": "{{ msg }}"}'}
      __ROUTE__
""",
    # Weighted destinations replace the route's transformations for their share.
    "split": """
    routes:
    - matchers: [{prefix: /}]
      options:
        transformations:
          requestTransformation:
            transformationTemplate:
              headers: {x-dest: {text: route}}
      routeAction:
        multi:
          destinations:
          - weight: 1
            destination: {upstream: {name: echo, namespace: default}}
            options:
              transformations:
                requestTransformation:
                  transformationTemplate:
                    headers: {x-dest: {text: '{{ upper("a") }}'}}
          - weight: 1
            destination: {upstream: {name: echo-too, namespace: default}}
            options:
              stagedTransformations:
                early:
                  requestTransforms:
                  - requestTransformation:
                      transformationTemplate:
                        headers: {x-dest: {text: b}}
""",
    # A RouteOption's transformations, and a RouteTable route inheriting its parent's.
    "shared": """
    routes:
    - matchers: [{prefix: /option}]
      optionsConfigRefs:
        delegateOptions: [{name: tagged, namespace: default}]
      __ROUTE__
    - matchers: [{prefix: /table}]
      options:
        stagedTransformations:
          regular:
            requestTransforms:
            - requestTransformation:
                transformationTemplate:
                  headers: {x-parent: {text: '{{ lower("P") }}'}}
      delegateAction: {ref: {name: table, namespace: default}}
""",
    "roundtrip": """
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            body: {text: '{{ context() }}'}
""",
}


SHARED = """
apiVersion: gateway.vendor.io/v1
kind: RouteOption
metadata: {name: tagged, namespace: default}
spec:
  options:
    transformations:
      requestTransformation:
        transformationTemplate:
          headers: {x-option: {text: '{{ length(header("x-word")) }}'}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: table, namespace: default}
spec:
  routes:
  - matchers: [{prefix: /table/own}]
    options:
      stagedTransformations:
        inheritTransformation: true
        early:
          requestTransforms:
          - requestTransformation:
              transformationTemplate:
                headers: {x-own: {text: '{{ upper("o") }}'}}
    routeAction: {single: {upstream: {name: echo, namespace: default}}}
  - matchers: [{prefix: /table}]
    routeAction: {single: {upstream: {name: echo, namespace: default}}}
"""


def _virtual_service(name: str, body: str) -> str:
    routes = "" if "routes:" in body else "    routes:\n"
    text = body.replace("__ROUTE__", ROUTE)
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.example.com]
{text}{routes}    - matchers: [{{prefix: /}}]
      {ROUTE}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    def manifests(port: int) -> list[str]:
        hosts = [_virtual_service(n, b) for n, b in HOSTS.items()]
        return [upstream("echo", port), upstream("echo-too", port), *hosts, SHARED]

    accepted = [f"VirtualService default.{name}" for name in HOSTS]
    work = tmp_path_factory.mktemp("transform-templates")
    with gw_with_echo(work, manifests, accepted, {"POD_NAME": "pod-7"}) as up:
        yield up


def send(gw: GwUp, host: str, path: str = "/", **kwargs: Any) -> httpx.Response:
    headers = {"host": f"{host}.example.com", **kwargs.pop("headers", {})}
    method = kwargs.pop("method", "POST" if "content" in kwargs else "GET")
    return httpx.request(method, gw.url + path, headers=headers, timeout=10, **kwargs)


def test_body_template_with_extractors_and_json_fields(gw: GwUp) -> None:
    body = {
        "user": {"name": "ann"},
        "order": "AB-12",
        "items": [{"name": "pen", "price": 2}, {"name": "ink", "price": 3.5}],
    }
    answer = send(gw, "body", content=json.dumps(body), headers={"user-agent": "curl/8.0"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {
        "who": "ann", "count": 2, "order": "AB-12", "agent": "curl", "sum": 5.5,
        "item0": "PEN", "item1": "INK",
    }  # fmt: skip
    assert answer.json()["headers"]["x-order"] == "AB-12"
    assert answer.json()["headers"]["x-first-item"] == "pen"
    assert answer.json()["headers"]["content-length"] == str(len(answer.json()["body"]))


def test_replace_all_extractor_on_a_text_body(gw: GwUp) -> None:
    answer = send(gw, "body", "/masked", content="card 4111 1111, pin 12")
    assert answer.json()["body"] == "card #### ####, pin ##"


def test_missing_json_field_is_a_bad_request(gw: GwUp) -> None:
    answer = send(gw, "body", content=json.dumps({"items": []}))
    assert answer.status_code == 400
    assert answer.text == "bad request: variable 'order' not found" or answer.text.startswith(
        "bad request: variable"
    )


def test_response_templates_read_request_headers_and_the_response(gw: GwUp) -> None:
    answer = send(gw, "response", "/x", headers={"x-ask": "tea"})
    assert answer.status_code == 200
    assert answer.headers["x-asked-for"] == "tea"
    assert answer.headers["x-upstream-method"] == "GET"
    assert answer.text == "ok tea via GET"
    assert answer.headers["content-length"] == str(len("ok tea via GET"))
    missing = send(gw, "response", "/x", headers={"x-respond-status": "404"})
    assert (missing.status_code, missing.text) == (404, "missing")
    other = send(gw, "response", "/x", headers={"x-respond-status": "503"})
    assert (other.status_code, other.text) == (503, "status 503")


def test_passthrough_leaves_the_body_alone(gw: GwUp) -> None:
    answer = send(gw, "passthrough", content="not json at all", headers={"x-word": "hello"})
    assert answer.status_code == 200
    assert answer.json()["body"] == "not json at all"
    assert answer.json()["headers"]["x-length"] == "5"


def test_body_that_is_not_json(gw: GwUp) -> None:
    strict = send(gw, "strict", content="{not json")
    assert strict.status_code == 400
    assert strict.text.startswith("bad request: the body is not valid JSON")
    assert send(gw, "strict", content='{"name": "bo"}').json()["headers"]["x-name"] == "bo"
    lenient = send(gw, "strict", "/lenient", content="{not json")
    assert lenient.status_code == 200
    assert lenient.json()["headers"]["x-name"] == "none"


def test_dynamic_metadata_reaches_a_later_filter(gw: GwUp) -> None:
    headers = send(gw, "metadata", headers={"x-tenant": "acme"}).json()["headers"]
    assert headers["x-seen-tenant"] == "acme-pod-7"
    assert headers["x-seen-plan"] == "gold"


def test_header_body_transform(gw: GwUp) -> None:
    answer = send(
        gw, "headerbody", "/p/q?a=1&b=x%20y&a=2", content="hi", headers={"x-k": "v"}
    ).json()
    data = answer["data"]
    assert data["body"] == "hi"
    assert data["headers"]["x-k"] == "v"
    assert (data["httpMethod"], data["path"]) == ("POST", "/p/q")
    assert data["queryString"] == "a=1&b=x%20y&a=2"
    assert data["queryStringParameters"] == {"a": "2", "b": "x y"}
    assert data["multiValueQueryStringParameters"] == {"a": ["1", "2"]}
    assert answer["headers"]["content-type"] == "application/json"


def test_clear_route_cache_reroutes_on_the_new_header(gw: GwUp) -> None:
    gold = send(gw, "reroute", headers={"x-plan": "gold"})
    assert (gold.status_code, gold.text) == (200, "gold route")
    plain = send(gw, "reroute", headers={"x-plan": "silver"})
    assert "x-route" not in plain.json()["headers"]


def test_matchers_and_inherited_entries(gw: GwUp) -> None:
    def entry(path: str, **headers: str) -> str | None:
        found: str | None = (
            send(gw, "match", path, headers=headers).json()["headers"].get("x-entry")
        )
        return found

    assert entry("/api/x", **{"x-v": "12"}) == "api"
    assert entry("/api/x", **{"x-v": "v1"}) == "host"
    assert entry("/child/own/x") == "child"
    assert entry("/child/other") == "host"


def test_raw_string_and_escape_characters(gw: GwUp) -> None:
    msg = 'say "hi"\\now'
    raw = send(gw, "escape", content=json.dumps({"msg": msg})).json()
    assert json.loads(raw["body"].replace(', "plain"', "}").split("}")[0] + "}")["raw"] == msg
    escaped = send(gw, "escape", "/escaped", content=json.dumps({"msg": msg})).json()
    assert escaped["data"] == {"msg": msg}


def test_weighted_destinations_replace_the_route_transformations(gw: GwUp) -> None:
    seen = {send(gw, "split").json()["headers"]["x-dest"] for _ in range(40)}
    assert seen == {"A", "b"}


def test_route_option_and_route_table_transformations(gw: GwUp) -> None:
    headers = send(gw, "shared", "/option", headers={"x-word": "four"}).json()["headers"]
    assert headers["x-option"] == "4"
    own = send(gw, "shared", "/table/own").json()["headers"]
    assert (own["x-own"], own["x-parent"]) == ("O", "p")
    # A table route without its own stagedTransformations gets the delegating route's.
    assert send(gw, "shared", "/table/x").json()["headers"]["x-parent"] == "p"


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=("Cs",))),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=8), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=st.one_of(
        st.lists(_JSON, max_size=4), st.dictionaries(st.text(max_size=8), _JSON, max_size=5)
    ),
    ascii_only=st.booleans(),
)
def test_random_json_round_trips_through_envoy(gw: GwUp, value: Any, ascii_only: bool) -> None:
    """`{{ context() }}` re-encodes the parsed body: any JSON comes back equal."""
    sent = json.dumps(value, ensure_ascii=ascii_only)
    answer = send(gw, "roundtrip", content=sent.encode())
    assert answer.status_code == 200, (sent, answer.text)
    assert answer.json()["data"] == value
