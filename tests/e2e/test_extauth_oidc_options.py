"""`oauth2.oidcAuthorizationCode` as the established gateway's guides write it, end to end:
`session.redis` (and its older name `session.store`), `session.cookie`, front-channel
logout, logout telling the provider (revocation and end-session endpoints), token and claim
headers, `parseCallbackPathAsRegex`, a `callbackPath` with a query, PKCE (and the guides'
static pair), `autoMapFromMetadata`, an `issuerUrl` without a scheme.

Real `gw up` with its extauth server, Envoy, an echo app, Redis, the OIDC provider
`oidc-provider-mock`, and an HTTP server of the test's standing in for the provider's
revocation and end-session endpoints (the mock has none it reports on).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.auth_services import HttpAuthService
from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import auth_config
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

STATIC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

AUTO_MAP_VS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: automap, namespace: default}
spec:
  virtualHost:
    domains: ["automap.test:*"]
    options:
      extauth: {configRef: {name: automap, namespace: gw-system}}
      stagedTransformations:
        early:
          requestTransforms:
          - requestTransformation:
              transformationTemplate:
                extractors:
                  login_hint: {header: x-login-hint, regex: '(.+)', subgroup: 1}
                headers:
                  x-hint-seen: {text: '{{ login_hint }}'}
    routes:
    - matchers: [{prefix: /}]
      routeAction: {single: {upstream: {name: app, namespace: gw-system}}}
"""


#: The established OIDC guide's encryption key secret (`gwctl create secret encryptionkey`).
COOKIE_KEY_SECRET = """
apiVersion: v1
kind: Secret
metadata: {name: cookie-key, namespace: gw-system}
type: gw.vendor.io.EncryptionKeySecret
stringData: {key: an example of an encryption key1}
"""


def configs(port: int, idp: OidcProvider, redis: RedisServer, recorder: str) -> str:
    def app(host: str) -> str:
        return f"http://{host}.test:{port}"

    redis_options = f'{{host: "{redis.address}"}}'
    made = [
        auth_config(
            "redis",
            app("redis"),
            idp.issuer,
            scopes="[email]",
            session=f"{{redis: {{cookieName: rs, options: {redis_options}}}}}",
            logoutPath="/logout",
            afterLogoutUrl=app("redis") + "/public/bye",
            frontChannelLogout="{path: /fc}",
            discoveryOverride=f"{{revocationEndpoint: {recorder}/provider/revoke, "
            f"endSessionEndpoint: {recorder}/provider/end-session}}",
            headers="{idTokenHeader: x-id-token, accessTokenHeader: authorization, "
            "useBearerSchemaForAuthorization: true}",
            identityToken="{claimsToHeaders: [{claim: email, header: x-email}, "
            "{claim: sub, header: x-sub, append: true}]}",
            accessToken="{claimsToHeaders: [{claim: sub, header: x-access-sub}]}",
        ),
        auth_config(
            "store",
            app("store"),
            idp.issuer,
            session=f"{{store: {{cookieName: st, options: {redis_options}}}}}",
        ),
        auth_config("cookie", app("cookie"), idp.issuer, session="{cookie: {keyPrefix: app}}"),
        auth_config(
            "cipher",
            app("cipher"),
            idp.issuer,
            session="{cipherConfig: {keyRef: {name: cookie-key, namespace: gw-system}}, "
            "cookie: {keyPrefix: enc}}",
        ),
        auth_config(
            "regex",
            app("regex"),
            idp.issuer,
            callback_path="'/callback(/.*)?'",
            parseCallbackPathAsRegex="true",
        ),
        auth_config("query", app("query"), idp.issuer, callback_path="'/callback?app=one'"),
        auth_config(
            "pkce",
            app("pkce"),
            idp.issuer,
            authEndpointQueryParams=f"{{code_challenge: {STATIC_CHALLENGE}, "
            "code_challenge_method: S256}",
            tokenEndpointQueryParams="{code_verifier: dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk}",
        ),
        auth_config(
            "automap",
            app("automap"),
            idp.issuer,
            autoMapFromMetadata="{namespace: gw.transform.early}",
        ),
        auth_config("scheme", app("scheme"), "theissuer.example"),
    ]
    return "---".join(made)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("oidc-options")
    started: list[Any] = []
    try:
        recorder = HttpAuthService()
        started.append(recorder)
        redis = RedisServer(work)
        started.append(redis)
        idp = OidcProvider(work)
        started.append(idp)
        gateway = ExtauthGateway(work)
        started.append(gateway)
        port = gateway.gw.http_port
        gateway.write("oidc", configs(port, idp, redis, recorder.url))
        gateway.write("automap-vs", AUTO_MAP_VS)
        gateway.write("cookie-key", COOKIE_KEY_SECRET)
        for name in ("redis", "store", "cookie", "cipher", "regex", "query", "pkce"):
            gateway.guard(name, name)
        gateway.gw.wait_status("VirtualService default.automap", "Accepted")
        yield {"gateway": gateway, "idp": idp, "redis": redis, "recorder": recorder}
    finally:
        for process in reversed(started):
            process.stop()


def agent(env: dict[str, Any], name: str) -> Agent:
    gw = env["gateway"].gw
    return Agent(gw.url, f"{name}.test:{gw.http_port}")


def log_in(env: dict[str, Any], client: Agent, sub: str, path: str = "/private") -> str:
    """Log in through the provider; returns the authorization URL the login started with."""
    start = client.start_login(path)
    location = str(start.headers["location"])
    callback = env["idp"].login(location, sub)
    done = client.get(callback)
    assert done.status_code == 302, done.text
    assert urlsplit(done.headers["location"]).path == path
    return location


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_redis_session_token_and_claim_headers(env: dict[str, Any]) -> None:
    client = agent(env, "redis")
    env["idp"].set_user("ann@example.com", {"email": "ann@example.com"})
    log_in(env, client, "ann@example.com")
    assert set(client.cookies) == {"rs"}
    assert env["redis"].client().get(client.cookies["rs"]) is not None
    seen = client.get("/private").json()["headers"]
    assert seen["x-email"] == "ann@example.com" and seen["x-sub"] == "ann@example.com"
    assert seen["authorization"].startswith("Bearer ") and seen["x-id-token"].count(".") == 2
    assert "x-access-sub" not in seen  # the provider's access tokens are opaque


def test_store_is_another_name_for_redis(env: dict[str, Any]) -> None:
    client = agent(env, "store")
    log_in(env, client, "sam")
    assert set(client.cookies) == {"st"}
    assert env["redis"].client().get(client.cookies["st"]) is not None
    assert client.get("/private").status_code == 200


def test_cookie_session_with_a_key_prefix(env: dict[str, Any]) -> None:
    client = agent(env, "cookie")
    log_in(env, client, "cora")
    assert {"app_id_token", "app_access_token"} <= set(client.cookies)
    assert client.get("/private").status_code == 200


def test_cookie_session_with_cipher_config_keeps_the_tokens_sealed(env: dict[str, Any]) -> None:
    """cipherConfig: the cookies carry the tokens encrypted (no JWT in them), the session
    works, and a cookie changed in the browser is no session (a new login)."""
    client = agent(env, "cipher")
    log_in(env, client, "cyril")
    sealed = {k: v for k, v in client.cookies.items() if k.startswith("enc_")}
    assert set(sealed) == {"enc_id_token", "enc_access_token"}
    assert not any(v.startswith("eyJ") or "." in v for v in sealed.values()), sealed
    assert client.get("/private").status_code == 200
    value = sealed["enc_id_token"]
    client.cookies["enc_id_token"] = value[:-4] + ("AAAA" if value[-4:] != "AAAA" else "BBBB")
    refused = client.get("/private")
    assert refused.status_code == 302, refused.text  # to the provider: log in again


def test_logout_tells_the_provider(env: dict[str, Any]) -> None:
    client = agent(env, "redis")
    recorder: HttpAuthService = env["recorder"]
    log_in(env, client, "lou")
    handle = client.cookies["rs"]
    stored = json.loads(env["redis"].client().get(handle))
    out = client.get("/logout")
    assert (out.status_code, out.headers["location"]) == (
        302,
        client_url(env, "redis") + "/public/bye",
    )
    assert env["redis"].client().exists(handle) == 0
    calls = wait_until(
        lambda: (
            (told := [r for r in recorder.requests if "/provider/" in r["path"]])
            and len(told) == 2
            and told
        ),
        what="the provider to be told (revocation and end of session)",
    )
    revoke = next(r for r in calls if r["path"] == "/provider/revoke")
    assert revoke["method"] == "POST"
    assert parse_qs(revoke["form"])["token"] == [stored["access_token"]]
    assert revoke["headers"]["Authorization"].startswith("Basic ")  # the client authenticates
    end = next(r for r in calls if r["path"].startswith("/provider/end-session"))
    assert end["method"] == "GET"
    assert query_of(end["path"])["id_token_hint"] == stored["id_token"]


def client_url(env: dict[str, Any], name: str) -> str:
    return f"http://{name}.test:{env['gateway'].gw.http_port}"


def test_front_channel_logout(env: dict[str, Any]) -> None:
    client = agent(env, "redis")
    log_in(env, client, "fred")
    handle = client.cookies["rs"]
    answer = client.get("/fc?iss=x&sid=y")
    assert (answer.status_code, answer.text) == (200, "")
    assert answer.headers["cache-control"] == "no-store"
    assert env["redis"].client().exists(handle) == 0 and "rs" not in client.cookies
    assert client.get("/private").status_code == 302  # logged out


def test_callback_path_as_a_regular_expression(env: dict[str, Any]) -> None:
    client = agent(env, "regex")
    location = log_in(env, client, "rex")
    assert query_of(location)["redirect_uri"] == client_url(env, "regex") + "/callback"
    assert client.get("/private").status_code == 200
    other = client.get("/callback/other")  # also a callback: no login of this browser's
    assert other.status_code == 400 and "x-echo-name" not in other.headers


def test_callback_path_with_a_query(env: dict[str, Any]) -> None:
    client = agent(env, "query")
    location = log_in(env, client, "quinn")
    assert query_of(location)["redirect_uri"] == client_url(env, "query") + "/callback?app=one"
    assert client.get("/private").status_code == 200


def test_pkce_is_on_and_a_static_pair_is_replaced(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    status = gateway.gw.status("AuthConfig gw-system.pkce")
    assert status is not None and status["state"] == "Warning"
    assert "code_challenge: ignored: gw makes a new PKCE challenge" in status["reason"]
    client = agent(env, "pkce")
    first = query_of(log_in(env, client, "pat"))
    second = query_of(agent(env, "pkce").start_login("/x").headers["location"])
    assert first["code_challenge_method"] == "S256"
    assert len({first["code_challenge"], second["code_challenge"], STATIC_CHALLENGE}) == 3
    assert client.get("/private").status_code == 200


def test_auto_map_from_metadata(env: dict[str, Any]) -> None:
    gw = env["gateway"].gw
    answer = httpx.get(
        gw.url + "/private",
        headers={"host": f"automap.test:{gw.http_port}", "x-login-hint": "alice@example.com"},
    )
    assert answer.status_code == 302
    assert query_of(answer.headers["location"])["login_hint"] == "alice@example.com"


def test_issuer_url_without_a_scheme(env: dict[str, Any]) -> None:
    status = env["gateway"].gw.status("AuthConfig gw-system.scheme")
    assert status is not None and status["state"] == "Warning"
    assert (
        "'theissuer.example' has no scheme: gw uses https://theissuer.example" in status["reason"]
    )
