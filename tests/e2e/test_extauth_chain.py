"""Chains of checks end to end: `spec.configs[]` in order (every config must allow, the first
denial answers), `booleanExpr` combining configs by name with short-circuits, and state
passed along the chain (an API key's metadata, an OIDC identity) to a later step, a
passthrough HTTP service the test runs, which records what it was sent.

Real `gw up` with its extauth server, Envoy, an echo app, a real OIDC provider
(`oidc-provider-mock`) and the test's HTTP authorization service.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.auth_services import ALLOW, HttpAuthService
from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.htpasswd import apr1
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider

pytestmark = pytest.mark.e2e

ALICE_PASSWORD = "wonder land"


def apikey_secret(name: str, key: str, labels: str, **data: str) -> str:
    extra = "".join(f", {k}: {json.dumps(v)}" for k, v in data.items())
    return f"""
apiVersion: v1
kind: Secret
metadata: {{name: {name}, namespace: default, labels: {{{labels}}}}}
type: extauth.vendor.io/apikey
stringData: {{api-key: {key}{extra}}}
---"""


def auth_config(name: str, configs: str, expr: str | None = None) -> str:
    return chain(name, configs, expr) + "---"


def basic_step() -> str:
    salt, hashed = apr1("alice", ALICE_PASSWORD)
    return f"""
  - name: user
    basicAuth:
      realm: chain
      apr: {{users: {{alice: {{salt: "{salt}", hashedPassword: "{hashed}"}}}}}}"""


def key_step(name: str, header: str, role: str, copy: bool = False) -> str:
    copies = (
        "\n      headersFromMetadataEntry: {x-team: {name: team, required: true}}" if copy else ""
    )
    return f"""
  - name: {name}
    apiKeyAuth:
      headerName: {header}
      labelSelector: {{role: {role}}}{copies}"""


def passthrough_step(name: str, url: str) -> str:
    return f"""
  - name: {name}
    passThroughAuth:
      http:
        url: {url}
        request: {{allowedHeaders: [authorization], passThroughState: true}}
        response: {{allowedUpstreamHeaders: [x-auth-extra], readStateFromResponse: true}}"""


def basic(user: str, password: str) -> dict[str, str]:
    return {"authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("chain")
    service = HttpAuthService()
    idp = OidcProvider(work)
    gateway = None
    try:
        gateway = ExtauthGateway(work)
        port = gateway.gw.http_port
        BASIC = basic_step()  # noqa: N806
        oidc_then_service = passthrough_step("service", service.url + "/oidc")
        gateway.write(
            "chain",
            apikey_secret("tenant-a", "tenant-key-a", "role: tenant")
            + apikey_secret("partner-p", "partner-key-p", "role: partner")
            + apikey_secret("team-blue", "blue-key", "role: member", team="blue")
            + apikey_secret("banned-b", "banned-key", "role: banned")
            + auth_config("in-order", BASIC + key_step("tenant", "x-tenant-key", "tenant"))
            + auth_config(
                "expr",
                key_step("tenant", "x-tenant-key", "tenant")
                + BASIC
                + key_step("partner", "x-partner-key", "partner")
                + passthrough_step("service", service.url + "/check"),
                "tenant && (user || partner || service)",
            )
            + auth_config(
                "negated",
                BASIC + key_step("banned", "x-banned-key", "banned"),
                "user && !banned",
            )
            + auth_config(
                "state",
                key_step("member", "x-api-key", "member", copy=True)
                + passthrough_step("service", service.url + "/state"),
            )
            + f"""
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: login-state, namespace: gw-system}}
spec:
  configs:
  - oauth2:
      oidcAuthorizationCode:
        appUrl: http://login-state.test:{port}
        callbackPath: /callback
        clientId: gw-chain
        clientSecretRef: {{name: oauth, namespace: gw-system}}
        issuerUrl: {idp.issuer}
        session: {{cookieOptions: {{notSecure: true}}}}{oidc_then_service}
""",
        )
        for name in ("in-order", "expr", "negated", "state", "login-state"):
            gateway.gw.wait_status(f"AuthConfig gw-system.{name}", "Accepted")
        for name in ("in-order", "expr", "negated", "state", "login-state"):
            gateway.guard(name, name)
        yield {"gateway": gateway, "service": service, "idp": idp}
    finally:
        if gateway is not None:
            gateway.stop()
        idp.stop()
        service.stop()


def test_configs_run_in_order_and_the_first_denial_answers(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    host = "in-order.test"
    nothing = gateway.get(host, "/")
    assert (nothing.status_code, nothing.headers["www-authenticate"]) == (
        401,
        'Basic realm="chain"',
    )
    no_key = gateway.get(host, "/", headers=basic("alice", ALICE_PASSWORD))
    assert no_key.status_code == 401
    assert no_key.headers["www-authenticate"] == "API key is missing or invalid"
    key_only = gateway.get(host, "/", headers={"x-tenant-key": "tenant-key-a"})
    assert key_only.headers["www-authenticate"] == 'Basic realm="chain"'  # basic runs first
    both = gateway.get(
        host, "/", headers={**basic("alice", ALICE_PASSWORD), "x-tenant-key": "tenant-key-a"}
    )
    assert both.status_code == 200
    assert both.json()["headers"]["x-user-id"] == "tenant-a"  # the last user identified


def test_boolean_expression_with_short_circuits(env: dict[str, Any]) -> None:
    """`tenant && (user || partner || service)`: the service is only asked when neither
    the user nor the partner allowed, and never without a tenant key."""
    gateway: ExtauthGateway = env["gateway"]
    service: HttpAuthService = env["service"]
    host, tenant = "expr.test", {"x-tenant-key": "tenant-key-a"}
    before = len(service.requests)
    ok_user = gateway.get(host, "/", headers={**tenant, **basic("alice", ALICE_PASSWORD)})
    ok_partner = gateway.get(host, "/", headers={**tenant, "x-partner-key": "partner-key-p"})
    assert (ok_user.status_code, ok_partner.status_code) == (200, 200)
    no_tenant = gateway.get(host, "/", headers={**basic("alice", ALICE_PASSWORD)})
    assert no_tenant.status_code == 401
    assert no_tenant.headers["www-authenticate"] == "API key is missing or invalid"
    assert len(service.requests) == before  # neither answer needed the service
    ok_service = gateway.get(host, "/", headers={**tenant, "authorization": ALLOW})
    assert ok_service.status_code == 200
    assert ok_service.json()["headers"]["x-auth-extra"] == "1"
    assert len(service.requests) == before + 1
    refused = gateway.get(host, "/", headers={**tenant, "x-partner-key": "wrong"})
    assert refused.status_code == 401  # the first denial: the user step's challenge
    assert refused.headers["www-authenticate"] == 'Basic realm="chain"'
    assert len(service.requests) == before + 2


def test_negation(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    alice = basic("alice", ALICE_PASSWORD)
    assert gateway.get("negated.test", "/", headers=alice).status_code == 200
    banned = gateway.get("negated.test", "/", headers={**alice, "x-banned-key": "banned-key"})
    assert (banned.status_code, banned.text) == (403, "")


def test_state_of_an_api_key_reaches_the_next_step(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    service: HttpAuthService = env["service"]
    answer = gateway.get(
        "state.test", "/", headers={"x-api-key": "blue-key", "authorization": ALLOW}
    )
    assert answer.status_code == 200
    seen = answer.json()["headers"]
    assert (seen["x-team"], seen["x-user-id"], seen["x-auth-extra"]) == ("blue", "team-blue", "1")
    sent = service.requests[-1]
    assert sent["path"] == "/state"
    assert sent["body"]["state"] == {"api_key_value": "blue-key", "x-team": "blue"}


def test_oidc_identity_reaches_the_next_step(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    service: HttpAuthService = env["service"]
    idp: OidcProvider = env["idp"]
    client = Agent(gateway.gw.url, f"login-state.test:{gateway.gw.http_port}")
    start = client.start_login("/private")
    assert client.get(idp.login(start.headers["location"], "dora")).status_code == 302
    refused = client.get("/private")  # logged in, but the service wants its header
    assert refused.status_code == 401 and "x-echo-name" not in refused.headers
    identity = service.requests[-1]["body"]["state"]["jwt"]
    payload = identity.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == "dora" and claims["aud"] in ("gw-chain", ["gw-chain"])
