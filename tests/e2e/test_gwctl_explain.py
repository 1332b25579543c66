"""`gwctl explain` as an operator runs it (a subprocess) against a real `gw up`: the route
with its file and line and the routes it delegated through, the JWT and RBAC verdicts, and
`--send` comparing with what the proxy really answered. (That the predictions are Envoy's
own choices over every golden case is `test_explain.py`'s job.)"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.gwctl import gwctl
from tests.support.processes import Echo, GwUp
from tests.support.tokens import SigningKey

pytestmark = pytest.mark.e2e

ISSUER = "https://issuer.example.com"


def shop(echo_port: int) -> str:
    return f"""apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: echo, namespace: default}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {echo_port}}}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: shop, namespace: default}}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{{prefix: /api}}]
        delegateAction: {{ref: {{name: api}}}}
      - matchers: [{{exact: /}}]
        directResponseAction: {{status: 200, body: home}}
"""


TABLE = """apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: api, namespace: default}
spec:
  routes:
    - matchers: [{prefix: /api/orders, methods: [POST]}]
      directResponseAction: {status: 201, body: ordered}
    - matchers: [{prefix: /api/users}]
      routeAction: {single: {upstream: {name: echo}}}
"""


def secure(pem: str) -> str:
    key = "\n".join("                  " + line for line in pem.strip().splitlines())
    return f"""apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: secure, namespace: default}}
spec:
  virtualHost:
    domains: [secure.example.com]
    options:
      jwt:
        providers:
          main:
            issuer: {ISSUER}
            jwks:
              local:
                key: |
{key}
      rbac:
        policies:
          admins:
            principals: [{{jwtPrincipal: {{claims: {{role: admin}}}}}}]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: echo}}}}}}
"""


#: A Lambda function (a region's endpoint by name, which does not resolve here: the DNS
#: answer is not faked) and a ring hash upstream whose locality weighting leaves its ring
#: empty: Envoy answers both with 503 `no healthy upstream`.
UNREACHABLE = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: lambda, namespace: default}
spec:
  aws:
    region: us-east-1
    awsAccountId: "123456789012"
    lambdaFunctions: [{logicalName: hello, lambdaFunctionName: hello-fn}]
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: sticky, namespace: default}
spec:
  static: {hosts: [{addr: 127.0.0.1, port: 9}]}
  loadBalancerConfig: {ringHash: {}, localityWeightedLbConfig: {}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: functions, namespace: default}
spec:
  virtualHost:
    domains: [functions.example.com]
    routes:
      - matchers: [{prefix: /hello}]
        routeAction:
          single: {upstream: {name: lambda}, destinationSpec: {aws: {logicalName: hello}}}
      - matchers: [{prefix: /sticky}]
        routeAction: {single: {upstream: {name: sticky}}}
"""


@dataclass
class Setup:
    gw: GwUp
    folder: Path
    key: SigningKey

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return gwctl(self.gw.home, "explain", *args)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("explain-cli")
    echo = Echo(root, "echo")
    key = SigningKey()
    folder = root / "config"
    folder.mkdir()
    (folder / "shop.yaml").write_text(shop(echo.port))
    (folder / "api.yaml").write_text(TABLE)
    (folder / "secure.yaml").write_text(secure(key.public_pem()))
    (folder / "functions.yaml").write_text(UNREACHABLE)
    gw = GwUp(folder, root / "home")
    try:
        gw.wait_status("VirtualService default.secure", "Accepted")
        gw.wait_status("VirtualService default.functions", "Accepted")
        yield Setup(gw, folder, key)
    finally:
        gw.stop()
        echo.stop()


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_explain_names_the_route_its_file_and_line_and_sends(setup: Setup) -> None:
    result = setup.run("GET", "http://shop.example.com/api/users/7", "--send")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    users = line_of(setup.folder / "api.yaml", "prefix: /api/users")
    delegating = line_of(setup.folder / "shop.yaml", "prefix: /api")
    assert "Route         default_shop-route-1: prefix /api/users" in out
    assert f"written in RouteTable default.api spec.routes[1].matchers[0] (api.yaml:{users})" in out
    assert (
        "delegated by VirtualService default.shop spec.virtualHost.routes[0] "
        f"(shop.yaml:{delegating})"
    ) in out
    assert "✗ method POST (sent: 'GET')" in out  # why the orders route did not match
    assert "Sent          200 from the upstream" in out
    assert out.rstrip().endswith("matches the prediction")


def test_explain_as_data(setup: Setup) -> None:
    result = setup.run("POST", "http://shop.example.com/api/orders", "-o", "json")
    data = json.loads(result.stdout)
    assert data["route"]["name"] == "default_shop-route-0"
    assert data["outcome"]["status"] == 201 and data["outcome"]["body"] == "ordered"
    assert data["virtual_host_why"] == "exact domain 'shop.example.com'"
    missing = json.loads(setup.run("GET", "http://shop.example.com/nothing", "-o", "json").stdout)
    assert missing["outcome"]["status"] == 404 and missing["outcome"]["by"] == "no route"
    assert [c["name"] for c in missing["earlier"]] == [
        "default_shop-route-0",
        "default_shop-route-1",
        "default_shop-route-2",
    ]


def test_explain_jwt_and_rbac(setup: Setup) -> None:
    url = "http://secure.example.com/"
    bare = json.loads(setup.run("GET", url, "-o", "json", "--send").stdout)
    assert (bare["outcome"]["status"], bare["outcome"]["body"]) == (401, "Jwt is missing")
    assert bare["sent"]["status"] == 401 and bare["sent"]["matchesPrediction"] is True
    jwt = next(f for f in bare["filters"] if f["kind"] == "jwt_authn")
    assert jwt["verdict"] == "responds 401 Jwt is missing"

    user = setup.key.token(ISSUER, role="user")
    denied = json.loads(
        setup.run("GET", url, "-H", f"Authorization: Bearer {user}", "-o", "json", "--send").stdout
    )
    assert (denied["outcome"]["status"], denied["outcome"]["body"]) == (403, "RBAC: access denied")
    assert denied["sent"]["status"] == 403

    admin = setup.key.token(ISSUER, role="admin")
    allowed = setup.run("GET", url, "-H", f"Authorization: Bearer {admin}", "--send")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "forwarded to echo_default" in allowed.stdout
    assert "policy admins: matches" in allowed.stdout

    other = SigningKey().token(ISSUER, role="admin")
    forged = json.loads(
        setup.run("GET", url, "-H", f"Authorization: Bearer {other}", "-o", "json", "--send").stdout
    )
    assert forged["outcome"]["body"] == "Jwt verification fails"
    assert forged["sent"]["status"] == 401


def test_explain_refuses_what_it_cannot_form(setup: Setup) -> None:
    bad = setup.run("GET", "http://shop.example.com/", "-H", "no colon")
    assert (bad.returncode, bad.stderr) == (1, "Error: header 'no colon' is not 'Name: value'\n")
    port = setup.run("GET", "http://shop.example.com:1/", "-o", "json")
    data = json.loads(port.stdout)
    assert data["port"] == setup.gw.http_port
    assert data["notes"][0] == (
        f"port 1 is no listener's: the proxy's http listener on port {setup.gw.http_port} "
        "is assumed"
    )


def test_explain_a_lambda_function_and_an_empty_ring(setup: Setup) -> None:
    """A DNS cluster: explain names the host and the function, and says it cannot know
    whether the name resolves; here it does not, and that is what the proxy answers."""
    result = setup.run("GET", "http://functions.example.com/hello", "--send")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "aws_lambda: invokes the route's AWS Lambda function" in out
    assert "arn:aws:lambda:us-east-1:123456789012:function:hello-fn, synchronously" in out
    assert (
        "cluster lambda_default (Upstream default.lambda): lambda.us-east-1.amazonaws.com:443"
        in out
    )
    assert "host names Envoy resolves by DNS" in out
    assert "body: 'no healthy upstream'" in out
    assert out.rstrip().endswith("matches the prediction")

    ring = json.loads(
        setup.run("GET", "http://functions.example.com/sticky", "-o", "json", "--send").stdout
    )
    outcome = ring["outcome"]
    assert (outcome["status"], outcome["body"]) == (503, "no healthy upstream")
    assert outcome["reason"] == (
        "ring_hash with locality weighting places only endpoints of localities that have a "
        "load balancing weight; priority 0's (127.0.0.1:9) have none, so its table is empty: "
        "Envoy answers 503 no healthy upstream"
    )
    assert ring["sent"]["status"] == 503 and ring["sent"]["matchesPrediction"] is True
    warning = setup.gw.wait_status("Upstream default.sticky", "Warning")
    assert "ringHash with localityWeightedLbConfig hashes only onto hosts" in warning["reason"]
