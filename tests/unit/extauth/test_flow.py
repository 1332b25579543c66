"""The login flow's decisions for details the end-to-end tests do not reach: the
authorization request, `failOnRedirect`, refreshing cookie sessions, logout without a store.

The identity provider is outside the product; it is served here by `httpx.MockTransport`
(discovery, keys, token endpoint) so that token lifetimes and refresh answers can be chosen.
The real provider is driven in tests/e2e/test_extauth*.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey

from gw.extauth.decisions import Allow, Deny, Request
from gw.extauth.flow import RelyingParty
from gw.extauth.oidc import IdentityProvider
from gw.extauth.sessions import CookieSessions, RedisSessions, redis_client
from gw.extauth.state import state_cookie_name
from gw.wire import extauth_oidc
from tests.support.redis_server import RedisServer

ISSUER = "https://idp.example.com"
KEY = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})
OTHER_KEY = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})


def id_token(lifetime: float, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": "app", "sub": "alice", "iat": now, "exp": now + lifetime}
    return jwt.encode({"alg": "RS256", "kid": "k1"}, body | claims, KEY)


class Provider:
    def __init__(self) -> None:
        self.token_requests: list[dict[str, list[str]]] = []
        self.token_headers: list[httpx.Headers] = []
        #: What the token endpoint gives as the access token (a JWT, to try its claims).
        self.access_token = "new-access"
        #: The nonce the next ID token carries (a login's).
        self.nonce: str | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("openid-configuration"):
            return httpx.Response(
                200,
                json={
                    "issuer": ISSUER,
                    "authorization_endpoint": ISSUER + "/authorize?tenant=t1",
                    "token_endpoint": ISSUER + "/token",
                    "jwks_uri": ISSUER + "/jwks",
                },
            )
        if request.url.path == "/jwks":
            return httpx.Response(200, json={"keys": [KEY.as_dict(private=False)]})
        form = parse_qs(request.content.decode())
        self.token_requests.append(form)
        self.token_headers.append(request.headers)
        return httpx.Response(
            200,
            json={
                "access_token": self.access_token,
                "id_token": id_token(300, **({"nonce": self.nonce} if self.nonce else {})),
                "expires_in": 300,
            },
        )


def config(**oidc: Any) -> extauth_oidc.OidcAuthorizationCode:
    base = extauth_oidc.OidcAuthorizationCode(
        app_url="https://app.example.com",
        callback_path="/callback",
        redirect_uri="https://app.example.com/callback",
        client_id="app",
        client_secret="s3cr3t",
        issuer_url=ISSUER,
        scopes=("openid", "email"),
        auth_endpoint_query_params=(("prompt", "login"),),
        id_token_header="x-id-token",
        logout_path="/logout",
        after_logout_url="https://app.example.com/bye",
        session=extauth_oidc.Session(allow_refreshing=True),
    )
    return dataclasses.replace(base, **oidc)


@pytest.fixture
async def provider() -> Any:
    fake = Provider()
    async with httpx.AsyncClient(transport=httpx.MockTransport(fake)) as http:
        yield fake, http


def party(http: httpx.AsyncClient, oidc: extauth_oidc.OidcAuthorizationCode) -> RelyingParty:
    return RelyingParty(
        oidc, "ns.app/config_0", IdentityProvider(oidc, http), CookieSessions(oidc.session)
    )


async def test_authorization_request(provider: tuple[Provider, httpx.AsyncClient]) -> None:
    rp = party(provider[1], config())
    answer = await rp.check(Request(path="/orders?id=7", cookies={}), {})
    assert isinstance(answer, Deny) and answer.status == 302
    location = dict(answer.headers)["location"]
    assert location.startswith(ISSUER + "/authorize?tenant=t1&")
    query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert query["response_type"] == "code" and query["client_id"] == "app"
    assert query["redirect_uri"] == "https://app.example.com/callback"
    assert query["scope"] == "openid email" and query["prompt"] == "login"
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["state"] and query["nonce"] and query["state"] != query["nonce"]
    (cookie,) = answer.set_cookies
    assert cookie.startswith(state_cookie_name(query["state"]) + "=")
    assert "Max-Age=600; Path=/callback; Secure; HttpOnly; SameSite=Lax" in cookie
    assert "s3cr3t" not in location + cookie


async def test_fail_on_redirect(provider: tuple[Provider, httpx.AsyncClient]) -> None:
    rp = party(provider[1], config(fail_on_redirect=True))
    answer = await rp.check(Request(path="/api", cookies={}), {})
    assert isinstance(answer, Deny) and (answer.status, answer.body) == (401, "login required")


async def test_cookie_session_is_refreshed(provider: tuple[Provider, httpx.AsyncClient]) -> None:
    fake, http = provider
    rp = party(http, config())
    old = id_token(-3600, iat=int(time.time()) - 7200)  # expired an hour ago
    cookies = {"id_token": old, "access_token": "old-access", "refresh_token": "r1"}
    answer = await rp.check(Request(path="/orders", cookies=cookies), {})
    assert isinstance(answer, Allow)
    assert fake.token_requests[0]["grant_type"] == ["refresh_token"]
    assert fake.token_requests[0]["refresh_token"] == ["r1"]
    new = dict(answer.headers)["x-id-token"]
    assert new != old
    assert any(c.startswith(f"id_token={new};") for c in answer.set_cookies)
    assert any(c.startswith("access_token=new-access;") for c in answer.set_cookies)


async def test_expired_cookie_session_without_refresh_logs_in_again(
    provider: tuple[Provider, httpx.AsyncClient],
) -> None:
    rp = party(provider[1], config(session=extauth_oidc.Session(allow_refreshing=False)))
    old = id_token(-3600, iat=int(time.time()) - 7200)
    answer = await rp.check(Request(path="/", cookies={"id_token": old, "refresh_token": "r"}), {})
    assert isinstance(answer, Deny) and answer.status == 302
    assert provider[0].token_requests == []


async def test_logout_clears_token_cookies(provider: tuple[Provider, httpx.AsyncClient]) -> None:
    rp = party(provider[1], config())
    cookies = {"id_token": "a", "access_token": "b", "other": "c"}
    answer = await rp.check(Request(path="/logout", cookies=cookies), {})
    assert isinstance(answer, Deny) and answer.status == 302
    assert dict(answer.headers)["location"] == "https://app.example.com/bye"
    assert sorted(c.split("=")[0] for c in answer.set_cookies) == ["access_token", "id_token"]
    assert all("Max-Age=0" in c for c in answer.set_cookies)


async def test_parallel_requests_share_one_refresh(
    provider: tuple[Provider, httpx.AsyncClient],
) -> None:
    """A page's assets all arrive with the same expired session: one refresh, not one each
    (a provider rotating refresh tokens would refuse the second)."""
    fake, http = provider
    rp = party(http, config())
    old = id_token(-3600, iat=int(time.time()) - 7200)
    cookies = {"id_token": old, "access_token": "old", "refresh_token": "r1"}
    answers = await asyncio.gather(
        *(rp.check(Request(path=f"/asset/{i}", cookies=cookies), {}) for i in range(5))
    )
    assert all(isinstance(a, Allow) for a in answers)
    assert len(fake.token_requests) == 1


async def test_claims_to_headers_and_metadata(provider: tuple[Provider, httpx.AsyncClient]) -> None:
    """ID token claims and, when the access token is a JWT the provider signed, its
    claims; `append` adds to what the client sent; claims as dynamic metadata."""
    fake, http = provider
    to = extauth_oidc.ClaimToHeader
    rp = party(
        http,
        config(
            identity_token_claims=(to(claim="email", header="x-email"),),
            access_token_claims=(
                to(claim="scope", header="x-scope", append=True),
                to(claim="groups", header="x-groups"),
            ),
            dynamic_metadata_from_claims=(("mail", "email"), ("who", "sub")),
        ),
    )
    access = jwt.encode(
        {"alg": "RS256", "kid": "k1"},
        {"iss": ISSUER, "sub": "alice", "scope": "read", "groups": ["a", "b"]},
        KEY,
    )
    cookies = {"id_token": id_token(300, email="a@example.com"), "access_token": access}
    answer = await rp.check(Request(path="/", cookies=cookies), {})
    assert isinstance(answer, Allow)
    assert dict(answer.headers)["x-email"] == "a@example.com"
    assert dict(answer.headers)["x-groups"] == '["a", "b"]'
    assert answer.append_headers == (("x-scope", "read"),)
    assert dict(answer.metadata) == {"mail": '"a@example.com"', "who": '"alice"'}
    forged = jwt.encode({"alg": "RS256", "kid": "k1"}, {"iss": ISSUER, "sub": "x"}, OTHER_KEY)
    cookies["access_token"] = forged  # not the provider's: no claims from it
    answer = await rp.check(Request(path="/", cookies=cookies), {})
    assert isinstance(answer, Allow) and "x-groups" not in dict(answer.headers)


async def test_target_domain(provider: tuple[Provider, httpx.AsyncClient]) -> None:
    rp = party(provider[1], config(session=extauth_oidc.Session(target_domain="example.com")))
    inside = await rp.check(Request(path="/", host="app.example.com:8080", cookies={}), {})
    assert isinstance(inside, Deny) and inside.status == 302
    outside = await rp.check(Request(path="/", host="example.org", cookies={}), {})
    assert isinstance(outside, Deny) and outside.status == 403
    assert outside.body == "this session is for example.com only (session targetDomain)"


async def test_session_id_goes_to_the_token_endpoint(
    provider: tuple[Provider, httpx.AsyncClient], tmp_path: Path
) -> None:
    """`session.redis.headerName`: the code exchange carries the id of the session the
    login makes (the Redis key of the stored tokens). Real Redis."""
    fake, http = provider
    redis = RedisServer(tmp_path)
    try:
        store = extauth_oidc.RedisStore(host="127.0.0.1", port=redis.port, cookie_name="s")
        oidc = config(session=extauth_oidc.Session(store=store, session_id_header="x-session-id"))
        client = redis_client(store)
        rp = RelyingParty(
            oidc, "ns.app/c", IdentityProvider(oidc, http), RedisSessions(oidc.session, client)
        )
        start = await rp.check(Request(path="/"), {})
        assert isinstance(start, Deny)
        query = parse_qs(urlsplit(dict(start.headers)["location"]).query)
        fake.nonce = query["nonce"][0]
        name, _, value = start.set_cookies[0].partition(";")[0].partition("=")
        callback = Request(
            path=f"/callback?code=c1&state={query['state'][0]}", cookies={name: value}
        )
        done = await rp.check(callback, {})
        assert isinstance(done, Deny) and done.status == 302, done
        sid = fake.token_headers[-1]["x-session-id"]
        assert any(c.startswith(f"s={sid};") for c in done.set_cookies)
        assert redis.client().get(sid) is not None
        await client.aclose()
    finally:
        redis.stop()
