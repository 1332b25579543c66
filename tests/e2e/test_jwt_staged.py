"""Staged JWT end to end: `gw up`, real Envoy, tokens signed here with PyJWT, a real OIDC
provider (`oidc-provider-mock`) and gw's extauth server for the stage order.

The established gateway's route-level JWT guide, scenario by scenario, with its manifests as
written but for the keys (its tokens are signed by keys we do not hold: four keys are made
here, one per user of the guide, Alice and Bob sharing the host's): `jwt` on the host, a
route's `jwtProvidersStaged` overriding the host's stage, same-stage and separate-stage
policies with RBAC, a validation policy, delegated routes. Then the order of the two
filters around ext_authz with an OIDC login: a check before extauth answers 401 before any
login redirect, and a check after extauth verifies the ID token extauth put into a header.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import yaml

from tests.support.extauth_manifests import auth_config, extauth_backends, extauth_settings
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.tokens import SigningKey

pytestmark = pytest.mark.e2e

SOLO, DOCS = "solo.io", "docs.xyz"
AFTER_HEADER = "x-after-ext-auth-bearer-token"
TO_APP = {"single": {"upstream": {"name": "httpbin", "namespace": "default"}}}
SECRET = "jwt-staged-client-secret"


def provider(key: SigningKey, issuer: str = SOLO, header: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"issuer": issuer, "jwks": {"local": {"key": key.public_pem()}}}
    if header is not None:
        out["tokenSource"] = {"headers": [{"header": header}]}
    return out


def route(name: str, prefix: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "matchers": [{"prefix": prefix}], "routeAction": TO_APP}
    if options:
        out["options"] = options
    return out


def vs(name: str, options: dict[str, Any] | None, routes: list[dict[str, Any]]) -> dict[str, Any]:
    host: dict[str, Any] = {"domains": [f"{name}.example.com"], "routes": routes}
    if options:
        host["options"] = options
    return {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"virtualHost": host},
    }


def rbac(team: str) -> dict[str, Any]:
    principal = {"jwtPrincipal": {"claims": {"team": team}}}
    return {"policies": {"viewer": {"nestedClaimDelimiter": ".", "principals": [principal]}}}


@dataclass
class Keys:
    host: SigningKey  # the guide's vhost-gateway-provider key (Alice, Bob)
    route: SigningKey  # its route-provider key (Carol)
    child: SigningKey  # its docs.xyz key (Dan)

    def alice(self) -> str:
        return self.host.token(SOLO, sub="alice", team="dev", exp=None)

    def bob(self) -> str:
        return self.host.token(SOLO, sub="bob", team="ops", exp=None)

    def carol(self) -> str:
        return self.route.token(SOLO, sub="carol", team="finance", exp=None)

    def dan(self) -> str:
        return self.child.token(DOCS, sub="dan", team="ops", exp=None)


def guide_scenarios(keys: Keys) -> list[dict[str, Any]]:
    """Scenarios 1 to 6, each on its own host `sN.example.com`."""
    host_jwt = {"providers": {"vhost-gateway-provider": provider(keys.host)}}
    route_after = {"afterExtAuth": {"providers": {"route-provider": provider(keys.route)}}}
    route_after_header = {
        "afterExtAuth": {"providers": {"route-provider": provider(keys.route, header=AFTER_HEADER)}}
    }
    status = route("status-200", "/status/200")
    return [
        vs("s1", {"jwt": host_jwt}, [route("get", "/get"), status]),
        vs(
            "s2",
            {"jwt": host_jwt},
            [route("get", "/get", {"jwtProvidersStaged": route_after}), status],
        ),
        vs(
            "s3",
            {"jwtStaged": {"afterExtAuth": host_jwt}},
            [
                route("get", "/get", {"jwtProvidersStaged": route_after_header}),
                route("open", "/open", {"jwtStaged": {"afterExtAuth": {"disable": True}}}),
                status,
            ],
        ),
        vs(
            "s4",
            {"jwtStaged": {"beforeExtAuth": host_jwt}, "rbac": rbac("ops")},
            [
                route(
                    "get",
                    "/get",
                    {"jwtProvidersStaged": route_after_header, "rbac": rbac("finance")},
                ),
                status,
            ],
        ),
        vs(
            "s5",
            {"jwtStaged": {"beforeExtAuth": {**host_jwt, "validationPolicy": "ALLOW_MISSING"}}},
            [route("get", "/get", {"jwtProvidersStaged": route_after_header}), status],
        ),
        vs(
            "s6",
            None,
            [
                {
                    "name": "status",
                    "matchers": [{"prefix": "/status"}],
                    "delegateAction": {"ref": {"name": "httpbin-child", "namespace": "default"}},
                    "options": {"jwtProvidersStaged": route_after_header},
                }
            ],
        ),
        {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "RouteTable",
            "metadata": {"name": "httpbin-child", "namespace": "default"},
            "spec": {
                "routes": [
                    route("status-200", "/status/200"),
                    route(
                        "status-418",
                        "/status/418",
                        {
                            "jwtProvidersStaged": {
                                "afterExtAuth": {
                                    "providers": {
                                        "child-route-provider": provider(
                                            keys.child, DOCS, header=AFTER_HEADER
                                        )
                                    }
                                }
                            }
                        },
                    ),
                ]
            },
        },
    ]


def stage_order(idp: OidcProvider, jwks_port: int) -> list[dict[str, Any]]:
    """Two hosts guarded by the same OIDC login: `before` checks a token before extauth
    (none sent: 401, no redirect); `after` verifies the ID token extauth adds as
    `x-id-token`, with the provider's own key set, and copies its `sub` to a header."""
    id_token = {
        "issuer": idp.issuer,
        "tokenSource": {"headers": [{"header": "x-id-token"}]},
        "claimsToHeaders": [{"claim": "sub", "header": "x-verified-sub"}],
        "jwks": {
            "remote": {
                "url": f"http://127.0.0.1:{jwks_port}/jwks",
                "upstreamRef": {"name": "idp", "namespace": "default"},
            }
        },
    }
    extauth = {"configRef": {"name": "login", "namespace": "gw-system"}}
    to_app = [{"matchers": [{"prefix": "/"}], "routeAction": TO_APP}]
    return [
        {
            "apiVersion": "gw.vendor.io/v1",
            "kind": "Upstream",
            "metadata": {"name": "idp", "namespace": "default"},
            "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": jwks_port}]}},
        },
        vs(
            "after",
            {"extauth": extauth, "jwtStaged": {"afterExtAuth": {"providers": {"idp": id_token}}}},
            to_app,
        ),
        vs(
            "before",
            {"extauth": extauth, "jwtStaged": {"beforeExtAuth": {"providers": {"idp": id_token}}}},
            to_app,
        ),
    ]


@dataclass
class Env:
    gw: GwUp
    keys: Keys
    idp: OidcProvider

    def get(self, host: str, path: str, **headers: str) -> httpx.Response:
        sent = {k.replace("_", "-"): v for k, v in headers.items()}
        return self.gw.get(path, host=f"{host}.example.com", headers=sent)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    work = tmp_path_factory.mktemp("jwt-staged")
    keys = Keys(SigningKey("RSA"), SigningKey("RSA"), SigningKey("RSA"))
    started: list[Any] = []
    try:
        echo = Echo(work, "httpbin")
        started.append(echo)
        idp = OidcProvider(work)
        started.append(idp)
        folder = work / "config"
        folder.mkdir()
        app = {
            "apiVersion": "gw.vendor.io/v1",
            "kind": "Upstream",
            "metadata": {"name": "httpbin", "namespace": "default"},
            "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": echo.port}]}},
        }
        documents = [app, *guide_scenarios(keys)]
        (folder / "guide.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
        gw = GwUp(folder, work / "home", extauth_port=free_port())
        started.append(gw)
        login = auth_config(
            "login",
            f"http://after.example.com:{gw.http_port}",
            idp.issuer,
            headers="{idTokenHeader: x-id-token}",
        )
        base = extauth_settings("5s") + "---" + extauth_backends(None, echo.port, SECRET)
        (folder / "login.yaml").write_text(base + "---" + login)
        idp_port = int(idp.issuer.rsplit(":", 1)[1])
        order = yaml.safe_dump_all(stage_order(idp, idp_port), sort_keys=False)
        (folder / "order.yaml").write_text(order)
        for name in ("s1", "s2", "s3", "s4", "s5", "s6", "after", "before"):
            gw.wait_status(f"VirtualService default.{name}", "Accepted")
        yield Env(gw, keys, idp)
    finally:
        for process in reversed(started):
            process.stop()


def passed(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, (response.status_code, response.text)
    assert response.headers["x-echo-name"] == "httpbin"
    body: dict[str, Any] = response.json()
    return body


def denied(response: httpx.Response, status: int, body: str) -> None:
    assert (response.status_code, response.text) == (status, body)
    assert "x-echo-name" not in response.headers


def bearer(token: str) -> str:
    return f"Bearer {token}"


def test_scenario_1_the_host_policy_protects_every_route(env: Env) -> None:
    for path in ("/get", "/status/200"):
        denied(env.get("s1", path), 401, "Jwt is missing")
        passed(env.get("s1", path, authorization=bearer(env.keys.alice())))


def test_scenario_2_a_route_policy_replaces_the_host_stage(env: Env) -> None:
    bob, carol = env.keys.bob(), env.keys.carol()
    passed(env.get("s2", "/status/200", authorization=bearer(bob)))
    denied(env.get("s2", "/get", authorization=bearer(bob)), 401, "Jwt verification fails")
    passed(env.get("s2", "/get", authorization=bearer(carol)))
    denied(env.get("s2", "/status/200", authorization=bearer(carol)), 401, "Jwt verification fails")


def test_scenario_3_same_stage_the_route_wins_and_disable(env: Env) -> None:
    carol, bob = env.keys.carol(), env.keys.bob()
    passed(env.get("s3", "/get", **{AFTER_HEADER: carol}))
    # The host's policy still holds on its other routes (the guide's table).
    denied(env.get("s3", "/status/200", **{AFTER_HEADER: carol}), 401, "Jwt is missing")
    passed(env.get("s3", "/status/200", authorization=bearer(bob)))
    # jwtStaged.afterExtAuth.disable: no token needed on that route.
    passed(env.get("s3", "/open"))


def test_scenario_4_separate_stages_need_both_tokens(env: Env) -> None:
    carol, bob = env.keys.carol(), env.keys.bob()
    denied(env.get("s4", "/get", **{AFTER_HEADER: carol}), 401, "Jwt is missing")
    body = passed(env.get("s4", "/get", authorization=bearer(bob), **{AFTER_HEADER: carol}))
    assert "authorization" not in body["headers"]  # keepToken false: removed before upstream
    # Bob's token is not the route provider's: the route's own stage refuses it.
    denied(
        env.get("s4", "/get", authorization=bearer(bob), **{AFTER_HEADER: bob}),
        401,
        "Jwt verification fails",
    )
    # The host's RBAC (team ops) applies where the route has none of its own.
    passed(env.get("s4", "/status/200", authorization=bearer(bob)))
    denied(
        env.get("s4", "/status/200", authorization=bearer(env.keys.alice())),
        403,
        "RBAC: access denied",
    )


def test_scenario_5_a_permissive_host_stage(env: Env) -> None:
    carol, bob = env.keys.carol(), env.keys.bob()
    passed(env.get("s5", "/get", **{AFTER_HEADER: carol}))  # ALLOW_MISSING before extauth
    denied(
        env.get("s5", "/get", authorization=bearer(carol), **{AFTER_HEADER: carol}),
        401,
        "Jwt verification fails",
    )
    passed(env.get("s5", "/status/200"))
    passed(env.get("s5", "/status/200", authorization=bearer(bob)))


def test_scenario_6_delegated_routes(env: Env) -> None:
    carol, dan = env.keys.carol(), env.keys.dan()
    passed(env.get("s6", "/status/200", **{AFTER_HEADER: carol}))
    denied(
        env.get("s6", "/status/418", **{AFTER_HEADER: carol}), 401, "Jwt issuer is not configured"
    )
    denied(env.get("s6", "/status/200", **{AFTER_HEADER: dan}), 401, "Jwt issuer is not configured")
    passed(env.get("s6", "/status/418", **{AFTER_HEADER: dan}))


def test_before_extauth_answers_before_any_login(env: Env) -> None:
    """The before stage runs ahead of ext_authz: no token is 401, not a login redirect;
    the after stage lets ext_authz answer first (a redirect to the provider)."""
    denied(env.get("before", "/private"), 401, "Jwt is missing")
    redirect = env.get("after", "/private")
    assert redirect.status_code == 302
    assert redirect.headers["location"].startswith(env.idp.issuer + "/oauth2/authorize?")


def test_after_extauth_verifies_the_token_extauth_added(env: Env) -> None:
    """After the OIDC login, ext_authz adds the ID token as `x-id-token`; the after-extauth
    JWT filter verifies it with the provider's key set and copies `sub` to a header. A client
    that sends its own `x-id-token` without a session never gets that far."""
    agent = Agent(env.gw.url, f"after.example.com:{env.gw.http_port}")
    start = agent.start_login("/private")
    callback = env.idp.login(start.headers["location"], "erin")
    assert agent.get(callback).status_code == 302
    body = passed(agent.get("/private"))
    assert body["headers"]["x-verified-sub"] == "erin"
    forged = env.get("after", "/private", x_id_token=env.keys.alice())
    assert forged.status_code == 302 and "x-echo-name" not in forged.headers
