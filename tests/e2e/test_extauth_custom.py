"""Custom auth servers and Envoy's JWT verification in AuthConfig chains, end to end.

- `customAuth` to servers of the user's, as the established gateway's guides set them up:
  Settings `namedExtauth` (an HTTP server with `httpService`, a gRPC one), chosen per route
  by name next to gw's own extauth server on the same host; and Settings `extauth` itself
  pointing at an HTTP server, used with `customAuth: {}` (a second `gw up`).
- `jwt: {}` in a chain: `jwt || apikey` on a host whose JWT options let requests without a
  valid token continue (`allowMissingOrFailedJwt`).

The auth servers are the test's own (tests/support/auth_services.py); real `gw up`, Envoy,
the extauth server and an echo app.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.auth_services import ALLOW, GrpcAuthService, HttpAuthService
from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import extauth_settings
from tests.support.htpasswd import apr1
from tests.support.tokens import SigningKey
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

ISSUER = "https://issuer.test"
TO_APP = {"single": {"upstream": {"name": "app", "namespace": "gw-system"}}}


def upstream(name: str, port: int, http2: bool = False) -> str:
    extra = ", useHttp2: true" if http2 else ""
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}{extra}}}
---"""


def named_settings() -> str:
    return (
        extauth_settings("5s")
        + """  namedExtauth:
    customHttpAuthz:
      extauthzServerRef: {name: custom-http, namespace: gw-system}
      requestTimeout: 5s
      httpService:
        pathPrefix: /ext
        request: {allowedHeaders: [authorization, x-user]}
        response: {allowedUpstreamHeaders: [x-auth-user], allowedClientHeaders: [x-client-note]}
    customGrpc:
      extauthzServerRef: {name: custom-grpc, namespace: gw-system}
"""
    )


def virtual_service(name: str, options: dict[str, Any], routes: list[dict[str, Any]]) -> str:
    manifest = {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "virtualHost": {
                "domains": [f"{name}.test"],
                "options": options,
                "routes": [{**r, "routeAction": TO_APP} for r in routes],
            }
        },
    }
    return "\n" + json.dumps(manifest) + "\n---\n"


def basic(user: str, password: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    started: list[Any] = []
    try:
        http_service, grpc_service = HttpAuthService(), GrpcAuthService()
        started += [http_service, grpc_service]
        gateway = ExtauthGateway(tmp_path_factory.mktemp("custom"), settings=named_settings())
        started.append(gateway)
        key = SigningKey()
        salt, hashed = apr1("alice", "secret")
        gateway.write(
            "custom",
            upstream("custom-http", http_service.port)
            + upstream("custom-grpc", grpc_service.port, http2=True)
            + f"""
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: basic, namespace: gw-system}}
spec:
  configs:
  - basicAuth: {{apr: {{users: {{alice: {{salt: "{salt}", hashedPassword: "{hashed}"}}}}}}}}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: jwt-or-key, namespace: gw-system}}
spec:
  booleanExpr: jwt || key
  configs:
  - {{name: jwt, jwt: {{}}}}
  - name: key
    apiKeyAuth: {{apiKeySecretRefs: [{{name: key, namespace: gw-system}}]}}
---
apiVersion: v1
kind: Secret
metadata: {{name: key, namespace: gw-system}}
type: extauth.vendor.io/apikey
stringData: {{api-key: the-key}}
---"""
            + virtual_service(
                "mixed",
                {"extauth": {"configRef": {"name": "basic", "namespace": "gw-system"}}},
                [
                    {
                        "matchers": [{"prefix": "/named-http"}],
                        "options": {"extauth": {"customAuth": {"name": "customHttpAuthz"}}},
                    },
                    {
                        "matchers": [{"prefix": "/named-grpc"}],
                        "options": {
                            "extauth": {
                                "customAuth": {
                                    "name": "customGrpc",
                                    "contextExtensions": {"team": "blue"},
                                }
                            }
                        },
                    },
                    {"matchers": [{"prefix": "/"}]},
                ],
            )
            + virtual_service(
                "jwt",
                {
                    # The AuthConfig's jwt step reads what Envoy verified before the call.
                    "jwtStaged": {
                        "beforeExtAuth": {
                            "allowMissingOrFailedJwt": True,
                            "providers": {
                                "p": {
                                    "issuer": ISSUER,
                                    "jwks": {"local": {"key": key.public_pem()}},
                                }
                            },
                        }
                    },
                    "extauth": {"configRef": {"name": "jwt-or-key", "namespace": "gw-system"}},
                },
                [{"matchers": [{"prefix": "/"}]}],
            ),
        )
        for vs in ("mixed", "jwt"):
            gateway.gw.wait_status(f"VirtualService default.{vs}", "Accepted")
        wait_until(
            lambda: (
                gateway.get("mixed.test", "/").status_code == 401
                and gateway.get("jwt.test", "/", headers={"api-key": "the-key"}).status_code == 200
            ),
            what="the extauth server to get the AuthConfigs",
        )
        yield {"gateway": gateway, "http": http_service, "grpc": grpc_service, "key": key}
    finally:
        for process in reversed(started):
            process.stop()


def test_named_http_server_on_a_route(named: dict[str, Any]) -> None:
    gateway: ExtauthGateway = named["gateway"]
    service: HttpAuthService = named["http"]
    ok = gateway.get(
        "mixed.test", "/named-http/x?q=1", headers={"authorization": ALLOW, "x-user": "kim"}
    )
    assert ok.status_code == 200 and ok.json()["headers"]["x-auth-user"] == "kim"
    asked = service.requests[-1]
    assert (asked["method"], asked["path"]) == ("GET", "/ext/named-http/x?q=1")
    denied = gateway.get("mixed.test", "/named-http/x")
    assert denied.status_code == 401 and denied.headers["x-client-note"] == "seen"
    assert "x-echo-name" not in denied.headers


def test_named_grpc_server_gets_the_context_extensions(named: dict[str, Any]) -> None:
    gateway: ExtauthGateway = named["gateway"]
    service: GrpcAuthService = named["grpc"]
    ok = gateway.get("mixed.test", "/named-grpc", headers={"authorization": ALLOW, "x-user": "lee"})
    assert ok.status_code == 200 and ok.json()["headers"]["x-auth-user"] == "lee"
    extensions = dict(service.requests[-1].attributes.context_extensions)
    assert extensions["team"] == "blue"  # (Envoy merges in the host's: its config_id)
    assert gateway.get("mixed.test", "/named-grpc").status_code == 401


def test_gw_server_on_the_other_routes_of_the_host(named: dict[str, Any]) -> None:
    gateway: ExtauthGateway = named["gateway"]
    assert gateway.get("mixed.test", "/other", headers=basic("alice", "secret")).status_code == 200
    challenge = gateway.get("mixed.test", "/other", headers={"authorization": ALLOW})
    assert (
        challenge.status_code == 401 and challenge.headers["www-authenticate"] == 'Basic realm=""'
    )


def test_jwt_in_a_boolean_expression(named: dict[str, Any]) -> None:
    gateway: ExtauthGateway = named["gateway"]
    key: SigningKey = named["key"]
    token = key.token(ISSUER)
    by_jwt = gateway.get("jwt.test", "/", headers={"authorization": f"Bearer {token}"})
    assert by_jwt.status_code == 200
    by_key = gateway.get("jwt.test", "/", headers={"api-key": "the-key"})
    assert by_key.status_code == 200 and by_key.json()["headers"]["x-user-id"] == "key"
    neither = gateway.get("jwt.test", "/")
    assert neither.status_code == 401 and neither.headers["www-authenticate"] == "Bearer"
    forged = SigningKey().token(ISSUER)  # verification fails: only the key could pass it
    assert (
        gateway.get("jwt.test", "/", headers={"authorization": f"Bearer {forged}"}).status_code
        == 401
    )


@pytest.fixture(scope="module")
def default_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Settings `extauth` itself points at an HTTP server (the custom-auth guide)."""
    service = HttpAuthService()
    gateway = None
    try:
        settings = (
            extauth_settings("2s").replace("name: extauth,", "name: custom-http,")
            + "    httpService: {request: {allowedHeaders: [authorization, X-foo]}}\n"
            + "    requestBody: {maxRequestBytes: 10240}\n"
        )
        gateway = ExtauthGateway(tmp_path_factory.mktemp("custom-default"), settings=settings)
        gateway.write(
            "custom",
            upstream("custom-http", service.port)
            + virtual_service(
                "guarded", {"extauth": {"customAuth": {}}}, [{"matchers": [{"prefix": "/"}]}]
            )
            + virtual_service(
                "wrong",
                {"extauth": {"configRef": {"name": "any", "namespace": "gw-system"}}},
                [{"matchers": [{"prefix": "/"}]}],
            ),
        )
        gateway.gw.wait_status("VirtualService default.guarded", "Accepted")
        yield {"gateway": gateway, "service": service}
    finally:
        if gateway is not None:
            gateway.stop()
        service.stop()


def test_custom_auth_to_the_settings_http_server(default_http: dict[str, Any]) -> None:
    gateway: ExtauthGateway = default_http["gateway"]
    service: HttpAuthService = default_http["service"]
    headers = {"authorization": ALLOW, "x-foo": "bar", "x-other": "not listed"}
    ok = gateway.get("guarded.test", "/api/pets/1", headers=headers)
    assert ok.status_code == 200 and ok.headers["x-echo-name"] == "app"
    asked = service.requests[-1]
    assert asked["path"] == "/api/pets/1" and asked["headers"]["x-foo"] == "bar"
    assert "x-other" not in asked["headers"]  # only what httpService lists goes along
    assert gateway.get("guarded.test", "/api/pets/2").status_code == 401
    status = gateway.gw.wait_status("VirtualService default.wrong", "Rejected")
    assert (
        "uses httpService: gw's extauth server, which runs AuthConfigs, speaks gRPC"
        in (status["reason"])
    )
