"""`gwctl explain` predicts what Envoy does: over every golden case, each request that can be
formed for each route (and one for no route, one for an unknown host or server name, and,
where a route verifies JWTs, requests with tokens) is explained from the live served
configuration and sent through a real Envoy; the route Envoy chose and its answer must be
the predicted ones. On the way, `gwctl validate` must say exactly what `gw up` says about
the same folder.

Everything is real: `gw up` (control plane and Envoy), echo upstreams, the rate-limit server
with Redis, a key-set server for remote JWKS. The cases are rewritten only where this machine
needs it (`tests/support/explain_cases.py`): upstream addresses, ports, the test's signing
key, and response headers `x-gw-route: %ROUTE_NAME%` and `x-gw-cluster: %UPSTREAM_CLUSTER%`
on every virtual host, which is how Envoy tells which route and cluster it chose. Envoy adds
no route header to what a filter answers by itself (a 401 from jwt_authn, a 403 from rbac):
there the status and body are compared. The answer of the extauth server (an OIDC login) is
its own decision: explain says so, and only the route is compared there. A 429 on a route
with rate limits is a counter explain cannot see reaching its limit; a `400 bad request:
...` on a route with transformation templates is a template explain does not run (it reads
the body) failing to render. An upstream that is a name on the internet (an AWS Lambda
or Azure Functions endpoint) is not faked and cannot be reached from here: its cases are
listed in OFF_THIS_MACHINE, and there a 503 `no healthy upstream` is accepted for the
predicted route and cluster only.
"""

from __future__ import annotations

import hashlib
import http.client
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gw.cli.explain import served_for
from gw.cli.install import Install, locate
from gw.cli.offline import run
from gw.explain.explainer import explain
from gw.explain.request import Request
from gw.explain.served import Served
from gw.xds.cache import Entry, version_of
from tests.support.explain_cases import (
    ROUTE_HEADER,
    Rewrite,
    Seen,
    compare,
    not_reachable_here,
    rewrite,
)
from tests.support.explain_samples import Sample, samples, token_samples
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.redis_server import RedisServer
from tests.support.tokens import JwksServer, SigningKey
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

CASES_DIR = Path(__file__).resolve().parents[1] / "golden" / "cases"
CASES = sorted(p.name.removesuffix(".in.yaml") for p in CASES_DIR.glob("*.in.yaml"))
ROLE = "gw-system~gateway-proxy"
#: Cases whose upstreams are host names on the internet, which this machine cannot resolve
#: or reach, and why the rewrite leaves them: there Envoy may answer a predicted forward
#: with 503 `no healthy upstream` (`explain_cases.not_reachable_here`).
OFF_THIS_MACHINE = {
    "upstream-aws-lambda": "a Lambda region's endpoint: the aws_lambda filter signs "
    "requests for that host name, over TLS",
    "upstream-azure-functions": "a function app's host name on azurewebsites: the route "
    "rewrites the path and host for it, over TLS",
}
TYPES = ("Cluster", "ClusterLoadAssignment", "Listener", "RouteConfiguration")


@dataclass
class Env:
    gw: GwUp
    folder: Path
    echoes: list[Echo]
    key: SigningKey
    jwks: JwksServer
    ratelimit_port: int
    install: Install
    requests: int = 0
    #: Requests a predicted upstream answered.
    answered: int = 0
    routes_seen: set[str] = field(default_factory=set)
    #: (case/route) where Envoy could not reach a predicted cluster of internet host names.
    not_reachable: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def rewrite(self) -> Rewrite:
        return Rewrite(
            echo_ports=[e.port for e in self.echoes],
            ratelimit_port=self.ratelimit_port,
            jwks_port=self.jwks.port,
            public_pem=self.key.public_pem(),
            free_port=free_port,
        )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    root = tmp_path_factory.mktemp("explain")
    redis = RedisServer(root)
    echoes = [Echo(root, f"echo-{i}") for i in range(3)]
    key = SigningKey()
    jwks = JwksServer(keys=[key.jwk()])
    folder = root / "config"
    folder.mkdir()
    ratelimit_port = free_port()
    # The extauth and rate-limit servers run, as in a default `gw up`: `gw up` declares
    # them as Upstreams, which `validate` (offline) assumes too.
    gw = GwUp(
        folder,
        root / "home",
        "--ratelimit-redis",
        redis.address,
        ratelimit_port=ratelimit_port,
        extauth_port=free_port(),
    )
    install = locate(gw.home)
    try:
        yield Env(gw, folder, echoes, key, jwks, ratelimit_port, install)
    finally:
        install.http.close()
        gw.stop()
        jwks.stop()
        for echo in echoes:
            echo.stop()
        redis.stop()


def statuses(rows: list[dict[str, Any]]) -> dict[str, tuple[str, str]]:
    return {
        f"{r['kind']} {r['namespace']}.{r['name']}": (r["status"]["state"], r["status"]["reason"])
        for r in rows
    }


def load_case(env: Env, text: str) -> None:
    """Serve the case alone (after an empty folder, so that no earlier case's last accepted
    configuration lingers), once the control plane says what validate says about it."""
    for old in env.folder.iterdir():
        old.unlink()
    wait_until(lambda: not env.gw.admin("/statuses")["resources"], what="an empty install")
    (env.folder / "case.yaml").write_text(text)
    _, result = run(env.folder)
    offline = {
        str(key): (status.state.value, status.reason) for key, status in result.statuses.items()
    }
    # gwctl validate (the same pipeline, offline) says what the running gw up says.
    wait_until(
        lambda: statuses(env.gw.admin("/statuses")["resources"]) == offline,
        what="the live statuses to be validate's",
    )


def served_and_acked(env: Env) -> Served:
    """The served configuration, once Envoy has taken exactly it."""
    served = served_for(env.install, "gateway-proxy", "gw-system", 5.0)
    expected = _versions(served)

    def acked() -> bool:
        connections = [c for c in env.gw.admin("/proxies")["connections"] if c["role"] == ROLE]
        types = connections[0]["types"] if connections else {}
        for type_name, version in expected.items():
            state = types.get(f"envoy.config.{_package(type_name)}.v3.{type_name}", {})
            if state.get("nack"):
                raise AssertionError(f"Envoy refused {type_name}: {state['nack']}")
            if state.get("acked") != version:
                return False
        return True

    wait_until(acked, what="Envoy to take the served configuration")
    return served


def _package(type_name: str) -> str:
    return {
        "Cluster": "cluster",
        "ClusterLoadAssignment": "endpoint",
        "Listener": "listener",
        "RouteConfiguration": "route",
    }[type_name]


def _versions(served: Served) -> dict[str, str]:
    """The version the control plane gives each type: a hash of names and contents."""
    by_type: dict[str, list[tuple[str, Any]]] = {
        "Cluster": list(served.clusters.items()),
        "ClusterLoadAssignment": list(served.endpoints.items()),
        "Listener": [(m.name, m) for m in served.listeners],
        "RouteConfiguration": list(served.routes.items()),
    }
    out = {}
    for type_name, items in by_type.items():
        if not items:
            continue
        entries = []
        for name, message in sorted(items, key=lambda i: i[0]):
            value = message.SerializeToString(deterministic=True)
            entry = Entry("", value, hashlib.sha256(value).hexdigest()[:16])
            entries.append((name, entry))
        out[type_name] = version_of(entries)
    return out


def send(sample: Sample) -> Seen:
    """The request exactly as the sample has it: `http.client` sends the path untouched
    (no dot-segment removal, no re-encoding), which Envoy's normalization must then meet."""
    connection: http.client.HTTPConnection | None = None
    try:
        connection = _connection(sample)
        connection.putrequest(sample.method, sample.path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("host", sample.host)
        for name, value in sample.headers:
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        tunnel = sample.method == "CONNECT" and 200 <= response.status < 300
        body = "" if tunnel else response.read().decode("utf-8", "replace")  # a tunnel has no end
        headers = {k.lower(): v for k, v in response.getheaders()}
    except (OSError, http.client.HTTPException) as exc:
        return Seen(None, {}, "", error=type(exc).__name__)
    finally:
        if connection is not None:
            connection.close()
    return Seen(response.status, headers, body)


def _connection(sample: Sample) -> http.client.HTTPConnection:
    if sample.scheme == "http":
        return http.client.HTTPConnection("127.0.0.1", sample.port, timeout=10)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the cases' certificates are made for tests
    connection = http.client.HTTPSConnection("127.0.0.1", sample.port, timeout=10)
    raw = socket.create_connection(("127.0.0.1", sample.port), timeout=10)
    try:
        connection.sock = context.wrap_socket(raw, server_hostname=sample.sni)
    except OSError:
        raw.close()
        raise
    return connection


def to_request(sample: Sample) -> Request:
    return Request(
        method=sample.method,
        scheme=sample.scheme,
        authority=sample.host,
        target=sample.path,
        headers=tuple((n.lower(), v) for n, v in sample.headers),
        port=sample.port,
        sni=sample.sni,
    )


@pytest.mark.parametrize("case", CASES)
def test_explain_predicts_what_envoy_does(env: Env, case: str) -> None:
    text = rewrite((CASES_DIR / f"{case}.in.yaml").read_text(), env.rewrite())
    load_case(env, text)
    served = served_and_acked(env)
    made = samples(served)
    requests = list(made.made)
    for sample in made.made:
        requests += token_samples(served, sample, env.key.sign)
    echo_names = {e.port: e.name for e in env.echoes}
    problems = []
    routes_seen = set()
    for sample in requests:
        explanation = explain(served, to_request(sample), port=sample.port, now=time.time())
        seen = send(sample)
        if seen.headers.get(ROUTE_HEADER):
            routes_seen.add(seen.headers[ROUTE_HEADER])
        if not_reachable_here(explanation, seen):
            env.not_reachable.append(f"{case}/{seen.headers[ROUTE_HEADER]}")
        env.answered += "x-envoy-upstream-service-time" in seen.headers
        for problem in compare(explanation, seen, echo_names):
            problems.append(f"{sample.method} {sample.url()} {list(sample.headers)}: {problem}")
    assert not problems, "\n".join(problems)
    env.requests += len(requests)
    env.routes_seen |= {f"{case}/{route}" for route in routes_seen}
    env.skipped += made.skipped


def test_explain_was_checked_on_every_kind_of_route(env: Env) -> None:
    """The comparisons above ran on many routes (their names from Envoy itself), and every
    sample could be made: a regression in the sample maker would otherwise hide. Most
    predicted forwards were answered by the predicted upstream, and a forward Envoy could
    not make for want of DNS was accepted only in the cases listed in OFF_THIS_MACHINE."""
    assert env.requests > 300
    assert len(env.routes_seen) >= 100  # (case, route) pairs Envoy named
    assert env.skipped == []
    assert env.answered >= 100
    cases = {seen.split("/")[0] for seen in env.not_reachable}
    assert cases <= set(OFF_THIS_MACHINE), (
        f"{sorted(cases - set(OFF_THIS_MACHINE))}: a forward was accepted as not reachable "
        "here; if the case's upstream really is a name on the internet that the rewrite "
        "cannot point at loopback, add it to OFF_THIS_MACHINE"
    )


CORNERS = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: echo, namespace: default}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: 9000}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: exact, namespace: default}
spec:
  virtualHost:
    domains: [a.example.com]
    routes:
      - directResponseAction: {status: 200, body: exact}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: suffix, namespace: default}
spec:
  virtualHost:
    domains: ["*.example.com"]
    routes:
      - directResponseAction: {status: 200, body: suffix}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: longer-suffix, namespace: default}
spec:
  virtualHost:
    domains: ["*.api.example.com"]
    routes:
      - directResponseAction: {status: 200, body: longer-suffix}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: prefix, namespace: default}
spec:
  virtualHost:
    domains: ["shop.*"]
    routes:
      - directResponseAction: {status: 200, body: prefix}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: any, namespace: default}
spec:
  virtualHost:
    domains: ["*"]
    routes:
      - matchers:
          - prefix: /inv
            headers: [{name: x-debug, value: "1", invertMatch: true}]
        directResponseAction: {status: 200, body: inverted}
      - matchers: [{prefix: /q, queryParameters: [{name: q, value: abc}]}]
        directResponseAction: {status: 200, body: query}
      - matchers: [{prefix: /multi, headers: [{name: x-a, value: "1"}]}]
        directResponseAction: {status: 200, body: multi}
      - matchers: [{exact: /Exact, caseSensitive: false}]
        directResponseAction: {status: 200, body: any-case}
      - matchers: [{regex: "/items/[0-9]+"}]
        routeAction: {single: {upstream: {name: echo}}}
      - matchers: [{prefix: /under, headers: [{name: x_user}]}]
        directResponseAction: {status: 200, body: underscore}
      - matchers: [{prefix: /weighted}]
        routeAction:
          multi:
            destinations:
              - {weight: 1, destination: {upstream: {name: echo}}}
              - {weight: 3, destination: {upstream: {name: other}}}
      - matchers: [{prefix: /}]
        directResponseAction: {status: 404, body: rest}
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: other, namespace: default}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: 9001}]
"""

#: (method, host, path, headers): Envoy's corners that a golden case does not reach.
CORNER_REQUESTS = [
    ("GET", "a.example.com", "/", ()),
    ("GET", "A.EXAMPLE.COM", "/", ()),
    ("GET", "b.example.com", "/", ()),
    ("GET", "x.api.example.com", "/", ()),
    ("GET", ".example.com", "/", ()),
    ("GET", "example.com", "/", ()),
    ("GET", "shop.anything", "/", ()),
    ("GET", "shop.", "/", ()),
    ("GET", "a.example.com:8080", "/", ()),
    ("GET", "a.example.com.", "/", ()),
    ("GET", "user@a.example.com", "/", ()),
    ("GET", "z", "/inv", ()),
    ("GET", "z", "/inv", (("x-debug", "1"),)),
    ("GET", "z", "/inv", (("x-debug", "2"),)),
    ("GET", "z", "/q?q=abc", ()),
    ("GET", "z", "/q?q=x&q=abc", ()),
    ("GET", "z", "/q?q=abc&q=x", ()),
    ("GET", "z", "/q?q=a%62c", ()),
    ("GET", "z", "/multi", (("x-a", "2"), ("x-a", "1"))),
    ("GET", "z", "/exact", ()),
    ("GET", "z", "/EXACT/", ()),
    ("GET", "z", "/items/12?x=1", ()),
    ("GET", "z", "/items/12/x", ()),
    ("GET", "z", "/a/../items/3", ()),
    ("GET", "z", "//items//4", ()),
    ("GET", "z", "/items%2F5", ()),
    ("GET", "z", "/%69tems/6", ()),
    ("GET", "z", "/under", (("x_user", "alice"),)),
    ("GET", "z", "/weighted", ()),
    ("DELETE", "z", "/weighted", ()),
]


def test_explain_follows_envoys_corners(env: Env) -> None:
    """Domain order and wildcard lengths, a host's trailing dot and userinfo (400 from gw's
    host check), absent and repeated headers, the first query
    value as sent, case-insensitive exact paths, whole-path regexes, normalization, escaped
    slashes, dropped underscore headers, weights: each predicted, each sent."""
    text = rewrite(CORNERS, env.rewrite())
    load_case(env, text)
    served = served_and_acked(env)
    port = env.gw.http_port
    echo_names = {e.port: e.name for e in env.echoes}
    problems = []
    for method, host, path, headers in CORNER_REQUESTS:
        sample = Sample(method, "http", host, port, path, tuple(headers))
        explanation = explain(served, to_request(sample), port=port, now=time.time())
        seen = send(sample)
        for problem in compare(explanation, seen, echo_names):
            problems.append(f"{method} {host} {path} {headers}: {problem}")
        if explanation.outcome.body is not None and explanation.outcome.status == 200:
            if seen.body != explanation.outcome.body:
                problems.append(f"{host} {path}: body {seen.body!r}")
    assert not problems, "\n".join(problems)
