"""RBAC on JWT claims end to end: `gw up`, real Envoy, tokens signed here with PyJWT.

One `gw up` serves every case. "Never reaches the upstream" is checked with Envoy's request
counter of the echo upstream's cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.processes import Echo, GwUp
from tests.support.tokens import SigningKey
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

STAFF = "https://staff.test"
PARTNER = "https://partner.test"
ECHO_REQUESTS = "cluster.echo_gw-system.upstream_rq_total"
KEYS = {"staff": SigningKey("RSA"), "partner": SigningKey("EC")}
TO_ECHO = {"single": {"upstream": {"name": "echo", "namespace": "gw-system"}}}


def principal(claims: dict[str, str], **fields: str) -> dict[str, Any]:
    return {"jwtPrincipal": {"claims": claims, **fields}}


POLICIES: dict[str, Any] = {
    "admins": {
        "permissions": {"methods": ["POST", "DELETE"], "pathPrefix": "/admin"},
        "principals": [principal({"role": "admin"}, provider="staff")],
    },
    "readers": {
        "permissions": {"methods": ["GET"], "pathPrefix": "/catalog"},
        "principals": [principal({"role": "reader"}), principal({"role": "admin"})],
    },
    "realm-ops": {
        "nestedClaimDelimiter": ".",
        "permissions": {"pathPrefix": "/realm"},
        "principals": [principal({"realm_access.roles": "ops"}, matcher="LIST_CONTAINS")],
    },
    "org": {
        "nestedClaimDelimiter": ".",
        "permissions": {"pathPrefix": "/org"},
        "principals": [principal({"org.name": "acme"})],
    },
    "verified": {
        "permissions": {"pathPrefix": "/verified"},
        "principals": [principal({"email_verified": "true"}, matcher="BOOLEAN")],
    },
    "staff-mail": {
        "permissions": {"pathPrefix": "/mail"},
        "principals": [principal({"email": r"[a-z]+@staff\.test"}, matcher="REGEX_MATCH")],
    },
}


def virtual_service(name: str, domain: str, rbac: dict[str, Any], routes: list[Any]) -> Any:
    providers = {
        "staff": {"issuer": STAFF, "jwks": {"local": {"key": KEYS["staff"].public_pem()}}},
        "partner": {"issuer": PARTNER, "jwks": {"local": {"key": KEYS["partner"].public_pem()}}},
    }
    return {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "virtualHost": {
                "domains": [domain],
                "options": {"jwt": {"providers": providers}, "rbac": rbac},
                "routes": [{**r, "routeAction": TO_ECHO} for r in routes]
                + [{"matchers": [{"prefix": "/"}], "routeAction": TO_ECHO}],
            }
        },
    }


@dataclass
class Env:
    gw: GwUp
    folder: Path

    def call(self, method: str, path: str, token: str | None, host: str = "shop.test") -> Any:
        headers = {"host": host}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return httpx.request(method, self.gw.url + path, headers=headers, timeout=10)


def staff(**claims: Any) -> str:
    return KEYS["staff"].token(STAFF, **claims)


def partner(**claims: Any) -> str:
    return KEYS["partner"].token(PARTNER, **claims)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp("rbac")
    echo = Echo(tmp, "echo")
    folder = tmp / "config"
    folder.mkdir()
    route_policies = {
        "gold": {
            "permissions": {"methods": ["GET"]},
            "principals": [principal({"tier": "gold"})],
        }
    }
    documents = [
        {
            "apiVersion": "gw.vendor.io/v1",
            "kind": "Upstream",
            "metadata": {"name": "echo", "namespace": "gw-system"},
            "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": echo.port}]}},
        },
        virtual_service(
            "shop",
            "shop.test",
            {"policies": POLICIES},
            [
                {"matchers": [{"prefix": "/open"}], "options": {"rbac": {"disable": True}}},
                {
                    "matchers": [{"prefix": "/catalog/private"}],
                    "options": {"rbac": {"policies": route_policies}},
                },
            ],
        ),
        virtual_service("closed", "closed.test", {}, []),
    ]
    (folder / "config.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    gw = GwUp(folder, tmp / "home")
    try:
        gw.wait_status("VirtualService default.shop", "Accepted")
        gw.wait_status("VirtualService default.closed", "Warning")
        yield Env(gw, folder)
    finally:
        gw.stop()
        echo.stop()


def allowed(response: httpx.Response) -> None:
    assert response.status_code == 200, (response.status_code, response.text)
    assert response.headers["x-echo-name"] == "echo"


def denied(env: Env, method: str, path: str, token: str | None, host: str = "shop.test") -> None:
    """403 `RBAC: access denied` exactly, and the upstream saw nothing."""
    before = env.gw.envoy_stat(ECHO_REQUESTS)
    response = env.call(method, path, token, host)
    assert (response.status_code, response.content) == (403, b"RBAC: access denied")
    assert len(response.content) == 19
    assert response.headers["content-type"] == "text/plain"
    assert "x-echo-name" not in response.headers
    assert env.gw.envoy_stat(ECHO_REQUESTS) == before


def test_jwt_is_checked_before_rbac(env: Env) -> None:
    response = env.call("POST", "/admin", None)
    assert (response.status_code, response.text) == (401, "Jwt is missing")
    response = env.call("POST", "/admin", staff(role="admin", exp=1_000_000))
    assert (response.status_code, response.text) == (401, "Jwt is expired")


def test_policy_allows_method_path_and_claims(env: Env) -> None:
    allowed(env.call("POST", "/admin/users", staff(role="admin")))
    allowed(env.call("DELETE", "/admin/users/7", staff(role="admin")))
    allowed(env.call("GET", "/catalog/items", staff(role="reader")))


def test_wrong_method_is_403(env: Env) -> None:
    denied(env, "GET", "/admin/users", staff(role="admin"))
    denied(env, "PUT", "/catalog/items", staff(role="reader"))


def test_path_outside_the_prefix_is_403(env: Env) -> None:
    denied(env, "GET", "/orders", staff(role="reader"))
    denied(env, "GET", "/", staff(role="admin"))


def test_claim_mismatch_is_403(env: Env) -> None:
    denied(env, "POST", "/admin/users", staff(role="user"))
    denied(env, "POST", "/admin/users", staff())  # no role claim at all
    denied(env, "POST", "/admin/users", staff(role="Admin"))  # exact, case-sensitive


def test_principal_bound_to_a_provider(env: Env) -> None:
    """`admins` names the staff provider: a partner token with role admin is verified (it
    is a provider of the host) but not allowed there; `readers` accepts either provider."""
    denied(env, "POST", "/admin/users", partner(role="admin"))
    allowed(env.call("GET", "/catalog/items", partner(role="reader")))


def test_nested_claim_list_contains(env: Env) -> None:
    allowed(env.call("GET", "/realm", staff(realm_access={"roles": ["dev", "ops"]})))
    denied(env, "GET", "/realm", staff(realm_access={"roles": ["dev"]}))
    denied(env, "GET", "/realm", staff(realm_access={"roles": "ops"}))  # not a list


def test_nested_claim_exact(env: Env) -> None:
    allowed(env.call("GET", "/org", staff(org={"name": "acme"})))
    denied(env, "GET", "/org", staff(org={"name": "other"}))
    denied(env, "GET", "/org", staff(**{"org.name": "acme"}))  # a dotted top-level claim


def test_boolean_claim(env: Env) -> None:
    allowed(env.call("GET", "/verified", staff(email_verified=True)))
    denied(env, "GET", "/verified", staff(email_verified=False))
    denied(env, "GET", "/verified", staff(email_verified="true"))  # a string is not a bool


def test_regex_claim(env: Env) -> None:
    allowed(env.call("GET", "/mail", staff(email="alice@staff.test")))
    # The expression has no anchors: it must match the whole value anyway.
    denied(env, "GET", "/mail", staff(email="alice@staff.test.evil.test"))
    denied(env, "GET", "/mail", staff(email="Mallory alice@staff.test"))


def test_route_with_rbac_disabled_still_needs_a_token(env: Env) -> None:
    allowed(env.call("DELETE", "/open/anything", partner()))
    response = env.call("GET", "/open/anything", None)
    assert (response.status_code, response.text) == (401, "Jwt is missing")


def test_route_policies_replace_the_hosts(env: Env) -> None:
    allowed(env.call("GET", "/catalog/items", staff(role="reader")))
    denied(env, "GET", "/catalog/private", staff(role="reader"))
    allowed(env.call("GET", "/catalog/private", staff(tier="gold")))


def test_rbac_without_policies_denies_everything(env: Env) -> None:
    status = env.gw.status("VirtualService default.closed")
    assert status is not None
    assert "rbac has no policies: every request is denied (403)" in status["reason"]
    denied(env, "GET", "/", staff(role="admin"), host="closed.test")


def test_policy_without_principals_is_rejected(env: Env) -> None:
    bad = virtual_service(
        "nobody",
        "nobody.test",
        {"policies": {"empty": {"permissions": {"methods": ["GET"]}, "principals": []}}},
        [],
    )
    path = env.folder / "bad.yaml"
    path.write_text(yaml.safe_dump(bad, sort_keys=False))
    try:
        status = env.gw.wait_status("VirtualService default.nobody", "Rejected")
        assert (
            "spec.virtualHost.options.rbac.policies.empty.principals: a policy needs at least "
            "one principal" in status["reason"]
        )
        wait_until(
            lambda: env.call("GET", "/", staff(), host="nobody.test").status_code == 404,
            what="the rejected host to stay unserved",
        )
    finally:
        path.unlink()
