"""Session passes end to end (Settings `extauth.sessionPass`): `gw up` (control plane,
Envoy, the extauth server), a real OIDC provider (`oidc-provider-mock`), real Redis and
`gw echo` as the application. Nothing is faked.

Whether the extauth server was asked is read from Envoy's statistics of the clusters of
its two doors (HTTP and gRPC checks). The TTL is short (4s) so that expiry can be seen;
the tests that need a live pass take a fresh one and use it before its `exp`, trying again
with a new one when the machine was too slow for that.

Hosts: `localhost:<port>` (AuthConfig `pass-a`, sessions in Redis, token and claim
headers), `b.test:<port>` (AuthConfig `pass-b`), `down.test:<port>` (AuthConfig
`pass-down`, its Redis never up).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.extauth_manifests import (
    auth_config,
    extauth_backends,
    extauth_settings,
    protected_app,
)
from tests.support.gwctl import gwctl
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

SECRET = "pass-test-client-secret"
TTL_S = 4
HTTP_CHECKS = "cluster.extauth-http_gw-system.upstream_rq_total"
GRPC_CHECKS = "cluster.extauth_gw-system.upstream_rq_total"
SETTINGS = extauth_settings("5s") + f"    sessionPass: {{ttl: {TTL_S}s}}\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("extauth-pass")
    started: list[Any] = []
    try:
        redis = RedisServer(work)
        started.append(redis)
        idp = OidcProvider(work)
        started.append(idp)
        echo = Echo(work, "app")
        started.append(echo)
        gw = _start_gw(work, echo, idp, redis)
        started.append(gw)
        yield {"gw": gw, "idp": idp}
    finally:
        for process in reversed(started):
            process.stop()


def _start_gw(work: Path, echo: Echo, idp: OidcProvider, redis: RedisServer) -> GwUp:
    folder = work / "config"
    folder.mkdir()
    (folder / "base.yaml").write_text(SETTINGS + "---" + extauth_backends(None, echo.port, SECRET))
    gw = GwUp(folder, work / "home", extauth_port=free_port())
    port = gw.http_port
    session = f'{{redis: {{cookieName: gw-session, options: {{host: "{redis.address}"}}}}}}'
    fields = {
        "scopes": "[email]",
        "logoutPath": "/logout",
        "session": session,
        "headers": "{idTokenHeader: x-id-token, accessTokenHeader: x-access-token}",
        "identityToken": "{claimsToHeaders: [{claim: email, header: x-email}]}",
    }
    dead = f"127.0.0.1:{free_port()}"
    down = (
        "{failOnFetchFailure: true, redis: "
        f'{{cookieName: gw-session, options: {{host: "{dead}"}}}}}}'
    )
    configs = [
        auth_config("pass-a", f"http://localhost:{port}", idp.issuer, **fields),
        auth_config("pass-b", f"http://b.test:{port}", idp.issuer, **fields),
        auth_config("pass-down", f"http://down.test:{port}", idp.issuer, session=down),
    ]
    hosts = [
        ("a", "localhost:*", "pass-a"),
        ("b", "b.test:*", "pass-b"),
        ("down", "down.test:*", "pass-down"),
    ]
    (folder / "auth.yaml").write_text(
        "---".join(configs) + "---" + "---".join(protected_app(*h, "/public") for h in hosts)
    )
    for name, domain, config in hosts:
        gw.wait_status(f"AuthConfig gw-system.{config}", "Accepted")
        gw.wait_status(f"VirtualService default.{name}", "Accepted")
        client = Agent(gw.url, domain.replace("*", str(port)))
        wait_until(
            lambda client=client: "is not loaded" not in client.get("/private").text,
            what=f"the extauth server to get {config}",
        )
    return gw


def checks(gw: GwUp) -> int:
    """Requests Envoy sent the extauth server (both doors) so far."""
    return sum(_stat(gw, name) for name in (HTTP_CHECKS, GRPC_CHECKS))


def _stat(gw: GwUp, name: str) -> int:
    try:
        return gw.envoy_stat(name)
    except KeyError:
        return 0


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return data


def pass_name(client: Agent) -> str:
    names = [n for n in client.cookies if n.startswith("gw-pass-")]
    assert len(names) == 1, client.cookies
    return names[0]


def logged_in(env: dict[str, Any], host: str, sub: str) -> Agent:
    gw: GwUp = env["gw"]
    client = Agent(gw.url, f"{host}:{gw.http_port}")
    start = client.start_login("/private")
    callback = client.get(env["idp"].login(start.headers["location"], sub))
    assert callback.status_code == 302
    assert "gw-session" in client.cookies
    return client


def fresh_pass(client: Agent) -> tuple[str, httpx.Response]:
    """A new pass from the extauth server (the request goes there: no pass sent)."""
    for name in [n for n in client.cookies if n.startswith("gw-pass-")]:
        del client.cookies[name]
    answer = client.get("/private")
    assert answer.status_code == 200
    return pass_name(client), answer


def send(client: Agent, path: str = "/private", **headers: str) -> httpx.Response:
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    return httpx.get(
        client.gateway_url + path,
        headers={"host": client.host, "cookie": cookie, **headers},
        timeout=15,
    )


def with_live_pass(
    env: dict[str, Any], client: Agent, **headers: str
) -> tuple[httpx.Response, int]:
    """A request sent with a pass that had not expired; and how many checks it cost."""
    gw: GwUp = env["gw"]
    for _ in range(5):
        name, _answer = fresh_pass(client)
        expires = claims_of(client.cookies[name])["exp"]
        before = checks(gw)
        response = send(client, **headers)
        cost = checks(gw) - before
        if time.time() < expires:
            return response, cost
    raise AssertionError("no request got through before its pass expired (machine too slow)")


def test_a_pass_lets_the_session_through_without_asking_the_extauth_server(
    env: dict[str, Any],
) -> None:
    client = logged_in(env, "localhost", "alice")
    name, python_path = fresh_pass(client)
    token = client.cookies[name]
    claims = claims_of(token)
    assert claims["aud"] == "gw-system.pass-a"
    assert 0 < claims["exp"] - time.time() <= TTL_S
    response, cost = with_live_pass(env, client, **{"x-id-token": "forged", "x-email": "m@evil"})
    assert response.status_code == 200
    assert cost == 0  # neither door was asked
    seen = response.json()["headers"]
    before = python_path.json()["headers"]
    for header in ("x-id-token", "x-access-token", "x-email"):
        assert seen[header] == before[header], header  # as the extauth server set them
    assert seen["x-email"] == "alice"  # the provider's claim, not the client's m@evil
    assert claims_of(seen["x-id-token"])["sub"] == "alice"  # not the client's "forged"


def test_an_expired_pass_goes_to_the_extauth_server_which_hands_a_new_one(
    env: dict[str, Any],
) -> None:
    gw: GwUp = env["gw"]
    client = logged_in(env, "localhost", "bob")
    name, _ = fresh_pass(client)
    old = client.cookies[name]
    expires = claims_of(old)["exp"]
    # Envoy lets a pass through up to 2s past its `exp` (its clock allowance).
    wait_until(lambda: time.time() > expires + 2.2, timeout=TTL_S + 5, what="the pass to expire")
    before = checks(gw)
    response = client.get("/private")
    assert response.status_code == 200
    assert checks(gw) - before == 1  # the HTTP check, once
    assert client.cookies[name] != old
    assert claims_of(client.cookies[name])["exp"] > expires


def test_a_forged_pass_falls_back_to_the_extauth_server(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    client = logged_in(env, "localhost", "carol")
    name, python_path = fresh_pass(client)
    head, payload, signature = client.cookies[name].split(".")
    claims = claims_of(client.cookies[name])
    for key in [k for k in claims if k.startswith("h")]:
        claims[key] = "root@evil"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    client.cookies[name] = f"{head}.{forged}.{signature}"
    before = checks(gw)
    response = send(client)
    assert response.status_code == 200  # the session is good: the server let it through
    assert checks(gw) - before == 1
    assert "root@evil" not in response.json()["headers"].values()
    assert response.json()["headers"]["x-email"] == python_path.json()["headers"]["x-email"]
    # Without a session the same forged pass gets the login redirect, never the app.
    del client.cookies["gw-session"]
    refused = send(client)
    assert refused.status_code == 302
    assert "x-echo-name" not in refused.headers


def test_a_pass_of_another_auth_config_is_not_accepted(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    a = logged_in(env, "localhost", "dave")
    name_a, _ = fresh_pass(a)
    served = gw.admin("/snapshots/xds")["gw-system~extauth"]["authConfigs"]
    name_b = {c["config_id"]: c["session_pass"]["cookie_name"] for c in served}["gw-system.pass-b"]
    assert name_b != name_a
    stranger = Agent(gw.url, f"b.test:{gw.http_port}")
    stranger.cookies[name_b] = a.cookies[name_a]
    before = checks(gw)
    refused = send(stranger)
    assert refused.status_code == 302  # to the login: the pass did not count
    assert checks(gw) - before == 1
    assert "x-echo-name" not in refused.headers


def test_logout_clears_the_pass(env: dict[str, Any]) -> None:
    client = logged_in(env, "localhost", "erin")
    name, _ = fresh_pass(client)
    bye = client.get("/logout")
    assert bye.status_code == 302
    cleared = [c for c in bye.headers.get_list("set-cookie") if c.startswith(f"{name}=;")]
    assert cleared and "Max-Age=0" in cleared[0]
    assert name not in client.cookies and "gw-session" not in client.cookies
    assert client.get("/private").status_code == 302


def test_the_pass_key_is_never_shown(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    served = gw.admin("/snapshots/xds")
    configs = served["gw-system~extauth"]["authConfigs"]
    assert {c["session_pass"]["signing_key"] for c in configs} == {"<redacted>"}
    shown = [
        httpx.get(gw.admin_url + path, timeout=5).text
        for path in ("/snapshots/xds", "/snapshots/proxies", "/statuses")
    ]
    assert '"gw.session_pass"' in shown[0]
    dump = gwctl(gw.home, "proxy", "dump")
    assert dump.returncode == 0, dump.stderr
    assert "gw.session_pass" in dump.stdout and "<redacted>" in dump.stdout
    shown.append(dump.stdout)
    logs = [gw.process.output(), (gw.state_dir / "logs" / "gw.log").read_text()]
    assert not any('"oct"' in text or "kty" in text for text in shown + logs)


def test_what_http_cannot_answer_still_goes_to_the_grpc_check(env: dict[str, Any]) -> None:
    """With passes on, the gRPC check behind the HTTP one is `gw.ext_authz.fallback`, run
    when the HTTP answer hands the request on: a 503 (which Envoy would turn into its
    `statusOnError` over HTTP) still reaches the client as the extauth server said it."""
    gw: GwUp = env["gw"]
    client = Agent(gw.url, f"down.test:{gw.http_port}")
    grpc = _stat(gw, GRPC_CHECKS)
    down = send_with(client, {"gw-session": "a-session-the-store-cannot-read"})
    assert (down.status_code, down.text) == (503, "session store unavailable")
    assert "x-echo-name" not in down.headers
    assert _stat(gw, GRPC_CHECKS) - grpc == 1


def send_with(client: Agent, cookies: dict[str, str]) -> httpx.Response:
    client.cookies = dict(cookies)
    return send(client)
