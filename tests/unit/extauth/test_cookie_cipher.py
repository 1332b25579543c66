"""`cipherConfig`: a cookie session's cookies hold their tokens sealed under the configured
key (the login through a real OIDC provider: tests/e2e/test_extauth_oidc_options.py)."""

from __future__ import annotations

import base64
import re

from gw.extauth.sessions import CookieCipher, CookieSessions, Tokens
from gw.wire.extauth_oidc import Session

KEY = b"an example of an encryption key1"


def cookie_values(set_cookies: list[str]) -> dict[str, str]:
    found = (re.match(r"([^=]+)=([^;]*)", c) for c in set_cookies)
    return {m.group(1): m.group(2) for m in found if m}


async def test_cookies_hold_sealed_tokens_that_load_back() -> None:
    session = Session(
        cookie_prefix="my_cookie_prefix",
        allow_refreshing=True,
        cipher_key=base64.b64encode(KEY).decode(),
    )
    sessions = CookieSessions(session)
    tokens = Tokens("eyJ.id.token", "access-token", "refresh-token", expires_at=0.0)
    cookies = cookie_values(await sessions.save(tokens, {}))
    assert set(cookies) == {
        "my_cookie_prefix_id_token",
        "my_cookie_prefix_access_token",
        "my_cookie_prefix_refresh_token",
    }
    assert not any(t in v for v in cookies.values() for t in ("eyJ", "access-token", "refresh"))
    assert await sessions.load(cookies) == tokens
    # Sealed again, the same tokens look different (a fresh nonce each time).
    assert cookie_values(await sessions.save(tokens, {})) != cookies


async def test_a_cookie_that_does_not_open_is_no_session() -> None:
    sessions = CookieSessions(Session(cipher_key=base64.b64encode(KEY).decode()))
    tokens = Tokens("id", "access", None, expires_at=0.0)
    cookies = cookie_values(await sessions.save(tokens, {}))
    # A plain token (set before cipherConfig), a value swapped between cookies, tampering.
    assert await sessions.load({"id_token": "eyJ.plain.token"}) is None
    assert await sessions.load({"id_token": cookies["access_token"]}) is None
    tampered = cookies["id_token"][:-2] + ("A" if cookies["id_token"][-2] != "A" else "B") + "A"
    assert await sessions.load({"id_token": tampered}) is None
    other = CookieSessions(Session(cipher_key=base64.b64encode(b"x" * 32).decode()))
    assert await other.load(cookies) is None


def test_without_a_key_the_cookies_are_the_tokens() -> None:
    assert CookieSessions(Session()).cipher is None
    cipher = CookieCipher(KEY)
    assert cipher.open("id_token", cipher.seal("id_token", "value")) == "value"
    assert cipher.open("id_token", "not base64 at all!") is None
