"""ID token verification and the provider caches.

The identity provider is outside the product; these tests serve its discovery document and
key set with `httpx.MockTransport` so that they can mint tokens the real provider never
would (wrong audience, wrong issuer, expired, forged, rotated keys). The real provider is
driven in tests/e2e/test_extauth.py.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

from gw.extauth.oidc import (
    IdentityProvider,
    IdTokenExpired,
    InvalidIdToken,
    ProviderUnavailable,
)
from gw.wire.extauth_oidc import OidcAuthorizationCode

ISSUER = "https://idp.example.com"
CLIENT = "gw-app"


class FakeProvider:
    def __init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})
        self.published = [self.key]
        self.requests: list[str] = []
        self.issuer = ISSUER
        self.down = False

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request.url.path)
        if self.down:
            raise httpx.ConnectError("connection refused")
        if request.url.path == "/.well-known/openid-configuration":
            return httpx.Response(
                200,
                json={
                    "issuer": self.issuer,
                    "authorization_endpoint": ISSUER + "/authorize",
                    "token_endpoint": ISSUER + "/token",
                    "jwks_uri": ISSUER + "/jwks",
                },
            )
        if request.url.path == "/jwks":
            return httpx.Response(
                200, json={"keys": [k.as_dict(private=False) for k in self.published]}
            )
        return httpx.Response(404)

    def token(self, key: Any = None, header: dict[str, Any] | None = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": CLIENT, "sub": "alice", "iat": now, "exp": now + 300}
        body.update(claims)
        key = key or self.key
        return jwt.encode(header or {"alg": "RS256", "kid": key.kid}, body, key)


@pytest.fixture
def fake() -> FakeProvider:
    return FakeProvider()


@pytest.fixture
async def provider(fake: FakeProvider) -> Any:
    config = OidcAuthorizationCode(
        app_url="https://app.example.com",
        callback_path="/callback",
        redirect_uri="https://app.example.com/callback",
        client_id=CLIENT,
        client_secret="s",
        issuer_url=ISSUER,
        after_logout_url="https://app.example.com",
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(fake.handler)) as http:
        yield IdentityProvider(config, http)


async def test_valid_token(fake: FakeProvider, provider: IdentityProvider) -> None:
    claims = await provider.verify_id_token(fake.token(nonce="n1"), nonce="n1")
    assert claims["sub"] == "alice"
    # one discovery and one key set fetch, then everything is cached
    await provider.verify_id_token(fake.token(), nonce=None)
    assert fake.requests == ["/.well-known/openid-configuration", "/jwks"]


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"aud": "someone-else"}, "aud"),
        ({"iss": "https://evil.example.com"}, "iss"),
        ({"aud": [CLIENT, "other"]}, "azp"),
        ({"nonce": "other"}, "nonce"),
    ],
)
async def test_claims_are_checked(
    fake: FakeProvider, provider: IdentityProvider, claims: dict[str, Any], reason: str
) -> None:
    with pytest.raises(InvalidIdToken, match=reason):
        await provider.verify_id_token(fake.token(**claims), nonce="n1")


async def test_expired_token_is_its_own_error(
    fake: FakeProvider, provider: IdentityProvider
) -> None:
    old = int(time.time()) - 3600
    with pytest.raises(IdTokenExpired):
        await provider.verify_id_token(fake.token(iat=old, exp=old + 60), nonce=None)


async def test_forged_signatures_are_refused(
    fake: FakeProvider, provider: IdentityProvider
) -> None:
    other = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    with pytest.raises(InvalidIdToken, match="signature"):
        await provider.verify_id_token(fake.token(key=other), nonce=None)
    secret = OctKey.import_key("s" * 32)
    with pytest.raises(InvalidIdToken):  # HS256 with a guessable secret is never accepted
        await provider.verify_id_token(
            fake.token(key=secret, header={"alg": "HS256", "kid": "k1"}), nonce=None
        )


@pytest.mark.parametrize(
    ("policy", "limit", "outcomes"),
    [
        ("never", 0, [(False, 1), (False, 1)]),
        ("limited", 1, [(True, 2), (False, 2)]),
        ("always", 0, [(True, 2), (True, 3)]),
    ],
)
async def test_unknown_key_and_the_refresh_policy(
    fake: FakeProvider,
    provider: IdentityProvider,
    policy: str,
    limit: int,
    outcomes: list[tuple[bool, int]],
) -> None:
    """`jwksCacheRefreshPolicy`: a token signed with a key the cached set lacks fetches the
    set again never, at most `limit` times per poll interval, or always. (accepted, key set
    fetches so far) after each of two such tokens."""
    provider.config = dataclasses.replace(
        provider.config, jwks_refresh=policy, jwks_refresh_limit=limit
    )
    await provider.verify_id_token(fake.token(), nonce=None)
    cached = provider.keys.value
    new = RSAKey.generate_key(2048, parameters={"kid": "k2", "use": "sig"})
    fake.published = [fake.key, new]
    for accepted, fetches in outcomes:
        provider.keys.value = cached  # the new key is not cached yet
        if accepted:
            assert (await provider.verify_id_token(fake.token(key=new), nonce=None))["sub"]
        else:
            with pytest.raises(InvalidIdToken, match="unknown key"):
                await provider.verify_id_token(fake.token(key=new), nonce=None)
        assert fake.requests.count("/jwks") == fetches


async def test_provider_down_then_cached_copy(
    fake: FakeProvider, provider: IdentityProvider
) -> None:
    fake.down = True
    with pytest.raises(ProviderUnavailable):
        await provider.authorization_endpoint()
    fake.down = False
    provider.metadata._retry_at = 0  # do not wait out the back-off in a unit test
    assert await provider.authorization_endpoint() == ISSUER + "/authorize"
    fake.down = True
    provider.metadata.fetched_at -= 3600  # stale: a refresh is due, and fails
    assert await provider.authorization_endpoint() == ISSUER + "/authorize"


async def test_discovery_for_another_issuer_is_refused(
    fake: FakeProvider, provider: IdentityProvider
) -> None:
    fake.issuer = "https://other.example.com"
    with pytest.raises(ProviderUnavailable, match="issuer"):
        await provider.authorization_endpoint()
