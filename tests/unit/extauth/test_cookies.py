"""Cookie parsing (hot path) and `set-cookie` attributes from cookieOptions."""

from __future__ import annotations

from gw.extauth.cookies import clear_cookie, parse_cookies, set_cookie
from gw.wire.extauth_oidc import CookieOptions


def test_parse() -> None:
    assert parse_cookies('a=1; b="two"; junk; c=x=y; a=shadowed; =empty') == {
        "a": "1",
        "b": "two",
        "c": "x=y",
    }


def test_default_attributes_are_the_safe_ones() -> None:
    assert set_cookie("s", "v", CookieOptions()) == (
        "s=v; Max-Age=2592000; Path=/; Secure; HttpOnly"
    )


def test_options() -> None:
    options = CookieOptions(
        max_age=0, secure=False, http_only=False, path=None, same_site="Strict", domain="a.b"
    )
    assert set_cookie("s", "v", options) == "s=v; Domain=a.b; SameSite=Strict"
    assert clear_cookie("s", options) == "s=; Max-Age=0; Domain=a.b; SameSite=Strict"
    assert set_cookie("s", "v", options, max_age=60, path="/cb", same_site="Lax") == (
        "s=v; Max-Age=60; Path=/cb; Domain=a.b; SameSite=Lax"
    )
