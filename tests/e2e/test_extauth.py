"""OIDC logins end to end: `gw up` (control plane, Envoy, the extauth server inside it),
a real OIDC provider (`oidc-provider-mock`), real Redis, `gw echo` as the application, and
headless Chromium for the whole login. Nothing is faked.

The folder holds no Upstream for the extauth server: the Settings name
`{name: extauth, namespace: gw-system}` as written for the established gateway, and `gw up`
declares its own server under that name. Every login here goes through that declaration.

Hosts of the one `gw up` this module shares:
- `localhost:<port>`: sessions in Redis (handle cookie `gw-session`).
- `127.0.0.1:<port>`: sessions in cookies (`id_token`, `access_token`).
- `*.test` names (reached with a Host header): the failure cases.

`requestTimeout` is 5s here: the provider's token endpoint alone takes ~200 ms on this
machine, the default timeout (tests/e2e/test_extauth_timeout.py shows what that does).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser

from tests.support import extauth_manifests
from tests.support.browser_oidc import chromium
from tests.support.extauth_manifests import extauth_backends, extauth_settings, protected_app
from tests.support.gwctl import gwctl
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

SECRET = "s3cr3t-client-secret"


def auth_config(name: str, app_url: str, issuer: str, **extra: str) -> str:
    """This module's AuthConfigs ask for the `email` scope and have a logout path."""
    return (
        extauth_manifests.auth_config(
            name, app_url, issuer, scopes="[email]", logoutPath="/logout", **extra
        )
        + "---\n"
    )


def virtual_service(name: str, domain: str, config: str) -> str:
    return protected_app(name, domain, config, public_prefix="/public") + "---\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("extauth")
    started: list[Any] = []
    try:
        redis_main = RedisServer(work)
        started.append(redis_main)
        redis_outage = RedisServer(work)
        started.append(redis_outage)
        idp = OidcProvider(work)
        started.append(idp)
        echo = Echo(work, "app")
        started.append(echo)
        gw = _start_gw(work, echo, idp, redis_main, redis_outage)
        started.append(gw)
        yield {
            "gw": gw,
            "idp": idp,
            "redis": redis_main,
            "redis_outage": redis_outage,
            "localhost": f"http://localhost:{gw.http_port}",
            "loopback": f"http://127.0.0.1:{gw.http_port}",
        }
    finally:
        for process in reversed(started):
            process.stop()


def _start_gw(
    work: Path, echo: Echo, idp: OidcProvider, redis_main: RedisServer, outage: RedisServer
) -> GwUp:
    folder = work / "config"
    folder.mkdir()
    extauth_port = free_port()
    (folder / "base.yaml").write_text(
        extauth_settings("5s") + "---" + extauth_backends(None, echo.port, SECRET)
    )
    gw = GwUp(folder, work / "home", extauth_port=extauth_port)
    port = gw.http_port
    dead = f"http://127.0.0.1:{free_port()}"

    def store(redis: RedisServer, fail: bool) -> dict[str, str]:
        return {
            "session": f"{{failOnFetchFailure: {str(fail).lower()}, redis: "
            f'{{cookieName: gw-session, options: {{host: "{redis.address}"}}}}}}',
            "headers": "{idTokenHeader: x-id-token, accessTokenHeader: x-access-token}",
        }

    configs = [
        auth_config(
            "redis-login",
            f"http://localhost:{port}",
            idp.issuer,
            afterLogoutUrl=f"http://localhost:{port}/public/bye",
            **store(redis_main, True),
        ),
        auth_config(
            "cookie-login",
            f"http://127.0.0.1:{port}",
            idp.issuer,
            headers="{idTokenHeader: x-id-token}",
        ),
        auth_config("strict", f"http://strict.test:{port}", idp.issuer, **store(outage, True)),
        auth_config("lenient", f"http://lenient.test:{port}", idp.issuer, **store(outage, False)),
        auth_config("idp-down", f"http://idpdown.test:{port}", dead),
        auth_config(
            "aud-a", f"http://a.test:{port}", idp.issuer, headers="{idTokenHeader: x-id-token}"
        ),
        auth_config(
            "aud-b", f"http://b.test:{port}", idp.issuer, headers="{idTokenHeader: x-id-token}"
        ),
    ]
    hosts = [
        ("redis-app", "localhost:*", "redis-login"),
        ("cookie-app", "127.0.0.1:*", "cookie-login"),
        ("strict", "strict.test:*", "strict"),
        ("lenient", "lenient.test:*", "lenient"),
        ("idp-down", "idpdown.test:*", "idp-down"),
        ("aud-a", "a.test:*", "aud-a"),
        ("aud-b", "b.test:*", "aud-b"),
    ]
    (folder / "auth.yaml").write_text(
        "".join(configs) + "".join(virtual_service(*h) for h in hosts)
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


def claims_of(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return data


def agent(env: dict[str, Any], host: str) -> Agent:
    gw: GwUp = env["gw"]
    return Agent(gw.url, f"{host}:{gw.http_port}")


def login(env: dict[str, Any], client: Agent, sub: str, path: str = "/private") -> httpx.Response:
    """Log in through the provider (no browser); returns the callback's response."""
    start = client.start_login(path)
    callback = env["idp"].login(start.headers["location"], sub)
    return client.get(callback)


def _status(response: httpx.Response, status: int) -> httpx.Response | None:
    return response if response.status_code == status else None


def assert_text(response: httpx.Response, status: int, body: str) -> None:
    assert (response.status_code, response.text) == (status, body)
    assert response.headers["content-type"] == "text/plain"
    assert "x-echo-name" not in response.headers  # the application never saw it


# --- the whole login, in a browser ---------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as browser:
        yield browser


def test_browser_login_with_redis_session_then_logout(
    env: dict[str, Any], browser: Browser
) -> None:
    app, idp, redis = env["localhost"], env["idp"], env["redis"].client()
    context = browser.new_context()
    page = context.new_page()
    page.goto(app + "/private/page?x=1")
    assert page.url.startswith(idp.issuer + "/oauth2/authorize?")  # the provider's login page
    page.fill("input[name=sub]", "alice@example.com")
    page.click("button:has-text('Authorize')")
    page.wait_for_url(app + "/private/page?x=1")
    seen = json.loads(page.inner_text("body"))
    assert seen["name"] == "app" and seen["path"] == "/private/page" and seen["query"] == "x=1"
    claims = claims_of(seen["headers"]["x-id-token"])
    assert claims["sub"] == "alice@example.com" and claims["email"] == "alice@example.com"
    assert claims["aud"] in ("gw-redis-login", ["gw-redis-login"])
    assert claims["iss"] == idp.issuer
    assert seen["headers"]["x-access-token"]

    cookies = {c["name"]: c for c in context.cookies()}
    handle = cookies["gw-session"]
    assert "." not in handle["value"] and len(handle["value"]) == 43  # an opaque handle
    assert handle["httpOnly"] and handle["secure"]
    assert not {"id_token", "access_token"} & set(cookies)
    stored = json.loads(redis.get(handle["value"]))
    assert stored["id_token"] == seen["headers"]["x-id-token"]
    assert 0 < redis.ttl(handle["value"]) <= 2_592_000

    page.goto(app + "/logout")
    page.wait_for_url(app + "/public/bye")  # afterLogoutUrl
    assert redis.exists(handle["value"]) == 0
    assert "gw-session" not in {c["name"] for c in context.cookies()}

    page.goto(app + "/private/again")
    assert page.url.startswith(idp.issuer + "/oauth2/authorize?")  # logs in again
    context.close()


def test_browser_login_with_many_claims_needs_the_store(
    env: dict[str, Any], browser: Browser
) -> None:
    """A token over the browser's cookie size limit (SPEC.md Limits): with the store the
    login works; with cookie sessions the browser drops the cookie and lands back at the
    provider."""
    idp = env["idp"]
    groups = [f"group-{i:04d}" for i in range(400)]
    idp.set_user("many@example.com", {"email": "many@example.com", "groups": groups})
    results = {}
    for app in (env["localhost"], env["loopback"]):
        context = browser.new_context()
        page = context.new_page()
        page.goto(app + "/private/claims")
        page.fill("input[name=sub]", "many@example.com")
        page.click("button:has-text('Authorize')")
        page.wait_for_load_state()
        results[app] = (page.url, page.inner_text("body"))
        context.close()
    url, body = results[env["localhost"]]
    assert url == env["localhost"] + "/private/claims"
    token = json.loads(body)["headers"]["x-id-token"]
    assert len(token) > 4096 and claims_of(token)["groups"] == groups
    url, _ = results[env["loopback"]]
    assert url.startswith(idp.issuer + "/oauth2/authorize?")


def test_browser_login_without_store_sets_both_token_cookies(
    env: dict[str, Any], browser: Browser
) -> None:
    app, idp = env["loopback"], env["idp"]
    context = browser.new_context()
    page = context.new_page()
    page.goto(app + "/private/cookies")
    assert page.url.startswith(idp.issuer + "/oauth2/authorize?")
    page.fill("input[name=sub]", "bob@example.com")
    page.click("button:has-text('Authorize')")
    page.wait_for_url(app + "/private/cookies")
    seen = json.loads(page.inner_text("body"))
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    assert cookies["id_token"] == seen["headers"]["x-id-token"]
    assert claims_of(cookies["id_token"])["sub"] == "bob@example.com"
    assert cookies["access_token"]
    page.goto(app + "/logout")  # afterLogoutUrl defaults to appUrl: protected, so a new login
    assert page.url.startswith(idp.issuer + "/oauth2/authorize?")
    assert not {"id_token", "access_token"} & {c["name"] for c in context.cookies()}
    context.close()


# --- the callback refuses what does not belong to this browser ----------------------------


def test_forged_state_is_refused(env: dict[str, Any]) -> None:
    client = agent(env, "localhost")
    start = client.get("/private")
    callback = env["idp"].login(start.headers["location"], "mallory")
    forged = callback.replace("state=", "state=forged")
    assert_text(
        client.get(forged),
        400,
        "login failed: this callback does not belong to a login started in this browser "
        "(unknown, expired or forged state); start again",
    )


def test_callback_in_another_browser_is_refused(env: dict[str, Any]) -> None:
    """Login CSRF: an attacker's callback URL opened by a victim, whose browser did not
    start that login."""
    attacker, victim = agent(env, "localhost"), agent(env, "localhost")
    start = attacker.get("/private")
    callback = env["idp"].login(start.headers["location"], "mallory")
    response = victim.get(callback)
    assert response.status_code == 400 and "unknown, expired or forged state" in response.text
    assert "gw-session" not in victim.cookies


def test_replayed_callback_is_refused(env: dict[str, Any]) -> None:
    client = agent(env, "localhost")
    start = client.get("/private")
    state_cookies = dict(client.cookies)
    callback = env["idp"].login(start.headers["location"], "carol")
    assert client.get(callback).status_code == 302
    assert "gw-session" in client.cookies
    replay = client.get(callback, cookies=state_cookies)  # even with the state cookie kept
    assert_text(replay, 400, "login failed: this login was already completed (replayed state)")


def test_wrong_code_is_refused(env: dict[str, Any]) -> None:
    client = agent(env, "localhost")
    start = client.get("/private")
    callback = env["idp"].login(start.headers["location"], "dave")
    wrong = callback.replace("code=", "code=x")
    assert_text(
        client.get(wrong),
        401,
        "login failed: the identity provider refused the code (invalid_grant)",
    )
    assert "gw-session" not in client.cookies


def test_provider_error_on_callback(env: dict[str, Any]) -> None:
    """The user clicked Deny on the provider's page."""
    client = agent(env, "localhost")
    start = client.get("/private")
    denied = httpx.post(start.headers["location"], data={"action": "deny"})
    assert denied.status_code == 302
    response = client.get(denied.headers["location"])
    assert response.status_code == 401
    assert response.text.startswith("login failed: the identity provider answered access_denied")


def test_id_token_for_another_audience_is_refused(env: dict[str, Any]) -> None:
    """A session cookie of app B (audience gw-aud-b) presented to app A: A starts a login
    instead of letting it through."""
    app_b = agent(env, "b.test")
    assert login(env, app_b, "erin").status_code == 302
    assert app_b.get("/private").status_code == 200
    token = app_b.cookies["id_token"]
    assert claims_of(token)["aud"] in ("gw-aud-b", ["gw-aud-b"])
    app_a = agent(env, "a.test")
    response = app_a.get("/private", cookies={"id_token": token, "access_token": "x"})
    assert response.status_code == 302
    assert response.headers["location"].startswith(env["idp"].issuer + "/oauth2/authorize?")
    assert "client_id=gw-aud-a" in response.headers["location"]


def test_forged_id_token_cookie_is_refused(env: dict[str, Any]) -> None:
    header = base64.urlsafe_b64encode(b'{"alg":"none"}').rstrip(b"=").decode()
    body = base64.urlsafe_b64encode(b'{"sub":"root","aud":"gw-aud-a"}').rstrip(b"=").decode()
    response = agent(env, "a.test").get("/private", cookies={"id_token": f"{header}.{body}."})
    assert response.status_code == 302 and "x-echo-name" not in response.headers


# --- outages -------------------------------------------------------------------------------


def test_redis_down(env: dict[str, Any]) -> None:
    """With the store down: failOnFetchFailure true answers 503 (once the server's
    in-memory copy of the session, kept 2 s, has expired); false starts a new login, whose
    callback then cannot store the session (503). Back up, sessions work again."""
    outage: RedisServer = env["redis_outage"]
    strict, lenient = agent(env, "strict.test"), agent(env, "lenient.test")
    assert login(env, strict, "frank").status_code == 302
    assert strict.get("/private").headers["x-echo-name"] == "app"
    outage.stop()
    try:
        down = wait_until(
            lambda: _status(strict.get("/private"), 503), timeout=5, what="the outage to show"
        )
        assert_text(down, 503, "session store unavailable")
        start = lenient.get("/private")
        assert start.status_code == 302
        callback = env["idp"].login(start.headers["location"], "grace")
        assert_text(lenient.get(callback), 503, "session store unavailable")
    finally:
        outage.start()
    assert login(env, lenient, "grace").status_code == 302
    assert lenient.get("/private").headers["x-echo-name"] == "app"


def test_identity_provider_down(env: dict[str, Any]) -> None:
    response = agent(env, "idpdown.test").get("/private")
    assert_text(response, 503, "identity provider unavailable")
    assert response.headers["retry-after"] == "5"


def test_unguarded_route_and_flow_routes(env: dict[str, Any]) -> None:
    """`/public` has extauth disabled; the callback is routed to the extauth server even
    though `/` would catch it."""
    client = agent(env, "localhost")
    assert client.get("/public/x").headers["x-echo-name"] == "app"
    response = client.get("/callback")
    assert response.status_code == 400 and "x-echo-name" not in response.headers


def test_client_secret_is_served_but_never_shown(env: dict[str, Any]) -> None:
    """The extauth server gets the client secret over xDS; the admin API, statuses and
    logs show it redacted or not at all."""
    gw: GwUp = env["gw"]
    served = gw.admin("/snapshots/xds")["gw-system~extauth"]["authConfigs"]
    assert {c["config_id"] for c in served} >= {"gw-system.redis-login", "gw-system.aud-a"}
    assert {c["steps"][0]["check"]["client_secret"] for c in served} == {"<redacted>"}
    shown = [
        httpx.get(gw.admin_url + path, timeout=5).text
        for path in ("/snapshots/xds", "/snapshots/proxies", "/statuses")
    ]
    logs = [gw.process.output(), (gw.state_dir / "logs" / "gw.log").read_text()]
    assert not any(SECRET in text for text in shown + logs)


# --- gw up's own server, declared ----------------------------------------------------------


def test_settings_name_the_server_gw_up_declares(env: dict[str, Any]) -> None:
    """No `extauth` Upstream was written: the Settings' `{name: extauth, namespace:
    gw-system}` resolves to the one `gw up` declares for its own server (the logins above
    go through it), its cluster HTTP/2 on the server's port. `gwctl check` sees the
    reference as resolved, and the declared Upstream has no status of its own, which the
    check does not count as a problem (a fresh `gw up` with its servers must pass it)."""
    gw: GwUp = env["gw"]
    assert gw.wait_status("Settings gw-system.default", "Accepted")
    proxies = gw.admin("/snapshots/proxies")
    (cluster,) = [c for c in proxies[0]["clusters"] if c["name"] == "extauth_gw-system"]
    assert cluster["http2"] is True
    assert cluster["endpoints"] == [{"address": "127.0.0.1", "port": gw.extauth_port}]
    assert "Upstream gw-system.extauth" not in gw.statuses()
    check = gwctl(gw.home, "check", "-x", "deployments,pods")
    assert "unknown upstream" not in check.stdout + check.stderr
    assert "with no status" not in check.stdout + check.stderr
    assert "Checking Upstreams... OK" in check.stdout
