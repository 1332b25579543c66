"""Session passes, server side: what a pass holds and when an allow gets none. Passes are
checked with PyJWT, an implementation independent of ours (Envoy checks them in the
end-to-end tests), and with `verify`, the Python statement of Envoy's check."""

from __future__ import annotations

import base64

import jwt
import pytest

from gw.extauth.cookies import parse_cookies
from gw.extauth.decisions import Allow, Deny
from gw.extauth.session_pass import ENVOY_ALLOWANCE_S, Passes, sign, verify
from gw.wire import extauth, extauth_oidc
from gw.wire.extauth_pass import SessionPass

KEY = b"k" * 32
NOW = 1_800_000_000.0


def _config(
    headers: tuple[str, ...] = ("x-email", "x-id-token"), ttl_s: int = 30
) -> extauth.AuthConfig:
    oidc = extauth_oidc.OidcAuthorizationCode(
        app_url="http://app",
        callback_path="/callback",
        redirect_uri="http://app/callback",
        client_id="c",
        issuer_url="http://idp",
        after_logout_url="http://app/",
        session=extauth_oidc.Session(cookie=extauth_oidc.CookieOptions(secure=False)),
    )
    return extauth.AuthConfig(
        config_id="ns.oidc",
        namespace="ns",
        name="oidc",
        steps=(extauth.Step(name="config_0", check=oidc),),
        user_id_header="x-user-id",
        session_pass=SessionPass(
            ttl_s=ttl_s,
            signing_key=base64.urlsafe_b64encode(KEY).rstrip(b"=").decode(),
            cookie_name="gw-pass-1",
            headers=headers,
        ),
    )


def _passes(**kwargs: object) -> Passes:
    passes = Passes.for_config(_config(**kwargs))  # type: ignore[arg-type]
    assert passes is not None
    return passes


def _token(cookie: str) -> str:
    return parse_cookies(cookie.split(";", 1)[0])["gw-pass-1"]


def test_a_pass_carries_the_headers_by_index_and_expires_after_its_ttl() -> None:
    allow = Allow(
        headers=(("x-id-token", "tok"), ("x-email", "a@b.c")),
        remove_headers=("x-user-id",),
        valid_until=NOW + 3600,
    )
    cookie = _passes().issue(allow, NOW)
    assert cookie is not None
    assert cookie == f"gw-pass-1={_token(cookie)}; Max-Age=28; Path=/; HttpOnly"
    claims = jwt.decode(
        _token(cookie),
        KEY,
        algorithms=["HS256"],
        audience="ns.oidc",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims == {
        "aud": "ns.oidc",
        "exp": int(NOW) + 30 - ENVOY_ALLOWANCE_S,
        "iat": int(NOW),
        "h0": "a@b.c",
        "h1": "tok",
    }
    assert verify(_token(cookie), KEY, "ns.oidc", NOW) == claims


def test_a_pass_never_outlives_its_session() -> None:
    cookie = _passes().issue(Allow(headers=(("x-email", "e"),), valid_until=NOW + 10.5), NOW)
    assert cookie is not None
    assert verify(_token(cookie), KEY, "ns.oidc", NOW)["exp"] == int(NOW + 10.5) - ENVOY_ALLOWANCE_S  # type: ignore[index]
    # A session about to end gets none.
    assert _passes().issue(Allow(valid_until=NOW + 0.5), NOW) is None


@pytest.mark.parametrize(
    "allow",
    [
        Allow(headers=(("x-other", "v"),), valid_until=NOW + 60),  # not a pass header
        Allow(append_headers=(("x-email", "v"),), valid_until=NOW + 60),
        Allow(metadata=(("k", '"v"'),), valid_until=NOW + 60),
        Allow(response_headers=(("x-r", "v"),), valid_until=NOW + 60),
        Allow(remove_headers=("x-forwarded-user",), valid_until=NOW + 60),
        Allow(headers=(("x-email", "two\nlines"),), valid_until=NOW + 60),
        Allow(headers=(("x-email", "名前"),), valid_until=NOW + 60),
        Allow(headers=(("x-email", "a"), ("X-Email", "b")), valid_until=NOW + 60),
        Allow(headers=(("x-id-token", "t" * 5000),), valid_until=NOW + 60),  # too large
        Allow(headers=(("x-email", "e"),)),  # no session said how long it lasts
    ],
)
def test_no_pass_for_what_envoy_could_not_reproduce(allow: Allow) -> None:
    assert _passes().issue(allow, NOW) is None


def test_no_passes_without_the_setting_or_for_other_shapes() -> None:
    config = _config()
    assert (
        Passes.for_config(extauth.AuthConfig(**{**_fields(config), "session_pass": None})) is None
    )
    two = extauth.AuthConfig(**{**_fields(config), "steps": config.steps * 2})
    assert Passes.for_config(two) is None


def _fields(config: extauth.AuthConfig) -> dict[str, object]:
    return {f: getattr(config, f) for f in config.__slots__}  # type: ignore[attr-defined]


def test_verification_refuses_forged_tampered_expired_and_other_audiences() -> None:
    token = sign({"aud": "ns.oidc", "exp": int(NOW) + 30, "h0": "a"}, KEY)
    assert verify(token, KEY, "ns.oidc", NOW) is not None
    assert verify(token, b"x" * 32, "ns.oidc", NOW) is None  # another key
    assert verify(token, KEY, "ns.other", NOW) is None  # another AuthConfig
    assert verify(token, KEY, "ns.oidc", NOW + 31) is None  # expired
    head, payload, signature = token.split(".")
    forged = sign({"aud": "ns.oidc", "exp": int(NOW) + 30, "h0": "root"}, KEY).split(".")[1]
    assert verify(f"{head}.{forged}.{signature}", KEY, "ns.oidc", NOW) is None
    assert verify("not-a-token", KEY, "ns.oidc", NOW) is None
    assert verify(f"{head}.{payload}.!!!", KEY, "ns.oidc", NOW) is None
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(f"{head}.{forged}.{signature}", KEY, algorithms=["HS256"], audience="ns.oidc")


def test_a_logins_own_answers_clear_the_pass() -> None:
    passes = _passes()
    cleared = passes.cleared(Deny(302, set_cookies=("s=; Max-Age=0",)))
    assert isinstance(cleared, Deny)
    assert cleared.set_cookies == ("s=; Max-Age=0", "gw-pass-1=; Max-Age=0; Path=/; HttpOnly")
    allow = Allow()
    assert passes.cleared(allow) is allow


def test_with_pass_adds_the_cookie_to_an_allow() -> None:
    allow = Allow(headers=(("x-email", "e"),), set_cookies=("s=1",), valid_until=NOW + 60)
    passed = _passes().with_pass(allow, NOW)
    assert isinstance(passed, Allow)
    assert passed.set_cookies[0] == "s=1"
    assert passed.set_cookies[1].startswith("gw-pass-1=")
    denied = Deny(401)
    assert _passes().with_pass(denied, NOW) is denied
