"""`opaAuth` end to end: Rego policies from ConfigMaps, evaluated in gw's extauth server by a
real Rego engine, behind `gw up`'s Envoy, with an echo app and a real OIDC provider
(`oidc-provider-mock`) for the guide's OIDC-then-OPA chain.

- `pets.test`: the guide's first policy (paths and methods), with `in` where the guide's
  older text calls `any()` (which OPA 1.0 removed; that spelling is refused with a status).
- `jwt-opa.test`: the guide's second one: an OIDC login, then a policy on the ID token the
  login put in the chain's state (`input.state.jwt`, decoded with `io.jwt.decode`).
- `context.test` / `fast.test`: the whole CheckRequest in `input.check_request` (context
  extensions, headers), and `fastInputConversion`, which leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

PETS_POLICY = """package test

default allow = false

allow {
    startswith(input.http_request.path, "/api/pets")
    input.http_request.method == "GET"
}

allow {
    input.http_request.path == "/api/pets/2"
    input.http_request.method in {"GET", "DELETE"}
}
"""
GUIDE_ANY = PETS_POLICY.replace(
    'input.http_request.method in {"GET", "DELETE"}',
    'any({input.http_request.method == "GET",\n'
    '        input.http_request.method == "DELETE"\n    })',
)
JWT_POLICY = """package test

default allow = false

allow {
    [header, payload, signature] := io.jwt.decode(input.state.jwt)
    payload["email"] == "admin@example.com"
}

allow {
    [header, payload, signature] := io.jwt.decode(input.state.jwt)
    payload["email"] == "user@example.com"
    not startswith(input.http_request.path, "/owners")
}
"""
CONTEXT_POLICY = """package ctx
import rego.v1

allow if {
    input.check_request.attributes.context_extensions.config_id == "gw-system.context"
    input.http_request.headers["x-team"] == "blue"
}

fast if input.http_request.headers["x-team"] == "blue"

reason := ["ok", "team blue"]
"""


def config_map(name: str, key: str, policy: str) -> str:
    body = "\n".join(f"    {line}" for line in policy.splitlines())
    return f"""
apiVersion: v1
kind: ConfigMap
metadata: {{name: {name}, namespace: gw-system}}
data:
  {key}: |
{body}
---"""


def opa_step(module: str, query: str, options: str = "") -> str:
    return f"""
  - opaAuth:
      modules: [{{name: {module}, namespace: gw-system}}]
      query: '{query}'{options}"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("opa")
    idp = OidcProvider(work)
    gateway = None
    try:
        gateway = ExtauthGateway(work)
        port = gateway.gw.http_port
        gateway.write(
            "policies",
            config_map("allow-get-users", "policy.rego", PETS_POLICY)
            + config_map("allow-jwt", "check-jwt.rego", JWT_POLICY)
            + config_map("context", "ctx.rego", CONTEXT_POLICY)
            + config_map("guide-any", "policy.rego", GUIDE_ANY),
        )
        gateway.write(
            "configs",
            chain("opa", opa_step("allow-get-users", "data.test.allow == true"))
            + "---"
            + chain("context", opa_step("context", "data.ctx.allow == true"))
            + "---"
            + chain(
                "fast",
                opa_step(
                    "context",
                    "[data.ctx.fast, data.ctx.reason[1]]",
                    "\n      options: {fastInputConversion: true, returnDecisionReason: true}",
                ),
            )
            + "---"
            + chain(
                "jwt-opa",
                f"""
  - oauth2:
      oidcAuthorizationCode:
        appUrl: http://jwt-opa.test:{port}
        callbackPath: /callback
        clientId: gloo
        clientSecretRef: {{name: oauth, namespace: gw-system}}
        issuerUrl: {idp.issuer}/
        session: {{cookieOptions: {{notSecure: true}}}}
        scopes: [email]"""
                + opa_step("allow-jwt", "data.test.allow == true"),
            ),
        )
        for name in ("opa", "context", "fast", "jwt-opa"):
            gateway.gw.wait_status(f"AuthConfig gw-system.{name}", "Accepted")
        for name in ("context", "fast", "jwt-opa"):
            gateway.guard(name, name)
        gateway.guard("pets", "opa")
        yield {"gateway": gateway, "idp": idp}
    finally:
        if gateway is not None:
            gateway.stop()
        idp.stop()


def test_guide_policy_on_paths_and_methods(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]

    def status(method: str, path: str) -> int:
        url = f"{gateway.gw.url}{path}"
        return httpx.request(method, url, headers={"host": "pets.test"}, timeout=10).status_code

    assert status("GET", "/api/pets") == 200
    assert status("GET", "/api/pets/1") == 200
    assert status("GET", "/api/") == 403
    assert status("DELETE", "/api/pets/1") == 403
    assert status("DELETE", "/api/pets/2") == 200
    denied = gateway.get("pets.test", "/owners")
    assert (denied.status_code, denied.text) == (403, "")


def test_policies_the_engine_cannot_run_are_refused_by_status(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    gateway.write("refused", chain("guide-any", opa_step("guide-any", "data.test.allow == true")))
    status = gateway.gw.wait_status("AuthConfig gw-system.guide-any", "Rejected")
    assert "calls any(), which gw's Rego engine does not have" in status["reason"]
    assert "spec.configs[0].opaAuth.modules" in status["reason"]
    broken = PETS_POLICY.replace('input.http_request.method == "GET"\n}', "input.x ==\n}", 1)
    gateway.write(
        "refused",
        config_map("broken", "policy.rego", broken)
        + chain("broken", opa_step("broken", "data.test.allow == true")),
    )
    status = gateway.gw.wait_status("AuthConfig gw-system.broken", "Rejected")
    assert "gw-system.broken/policy.rego:7:" in status["reason"]
    gateway.write("refused", chain("missing", opa_step("nowhere", "data.test.allow")))
    status = gateway.gw.wait_status("AuthConfig gw-system.missing", "Rejected")
    assert "ConfigMap gw-system.nowhere not found" in status["reason"]


def test_edited_policy_takes_effect(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    assert gateway.get("pets.test", "/api/pets").status_code == 200
    stricter = PETS_POLICY.replace('startswith(input.http_request.path, "/api/pets")', "false")
    gateway.write(
        "policies-edit",
        config_map("allow-get-users", "policy.rego", stricter).removesuffix("---"),
    )
    try:
        wait_until(
            lambda: gateway.get("pets.test", "/api/pets").status_code == 403,
            what="the edited policy to refuse",
        )
        assert gateway.get("pets.test", "/api/pets/2").status_code == 200
    finally:
        (gateway.folder / "policies-edit.yaml").unlink()


def test_check_request_and_fast_input_conversion(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    blue = {"x-team": "blue"}
    assert gateway.get("context.test", "/", headers=blue).status_code == 200
    assert gateway.get("context.test", "/", headers={"x-team": "red"}).status_code == 403
    # fast: no check_request, but http_request's headers are there (an array result whose
    # first element is true allows).
    assert gateway.get("fast.test", "/", headers=blue).status_code == 200
    assert gateway.get("fast.test", "/").status_code == 403


def test_oidc_identity_decides_in_the_policy(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    idp: OidcProvider = env["idp"]
    idp.set_user("admin", {"email": "admin@example.com"})
    idp.set_user("user", {"email": "user@example.com"})
    idp.set_user("other", {"email": "other@example.com"})
    host = f"jwt-opa.test:{gateway.gw.http_port}"
    for sub, owners, visits in (("admin", 200, 200), ("user", 403, 200), ("other", 403, 403)):
        client = Agent(gateway.gw.url, host)
        start = client.start_login("/visits")
        assert client.get(idp.login(start.headers["location"], sub)).status_code == 302
        assert client.get("/visits").status_code == visits, sub
        assert client.get("/owners/1").status_code == owners, sub
