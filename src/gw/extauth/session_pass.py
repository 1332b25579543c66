"""Session passes, server side: the cookie an allow of an OIDC session hands the browser,
which Envoy verifies by itself (`translator/envoy/extauth_pass.py`) so that the session's
next requests skip this server until it expires (Settings `extauth.sessionPass`, a gw
extension; `gw.wire.extauth_pass` has the format).

A pass is made only for what Envoy can reproduce exactly: an allow whose headers are all
among the AuthConfig's pass headers, each one line of Latin-1, nothing appended, no
dynamic metadata, no response headers, nothing removed but the user id header (which the
listener strips anyway), and a cookie that fits in 4 KiB. Anything else gets no pass, and
the session's requests keep coming here, as without passes. It expires at the earlier of
now + the TTL and the session's own expiry (less Envoy's clock allowance). A login's own
requests (callback, logout) clear it, so a logout ends it in this browser at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import replace

from gw.extauth.cookies import clear_cookie, set_cookie
from gw.extauth.decisions import Allow, Decision, Deny
from gw.wire.extauth import AuthConfig
from gw.wire.extauth_oidc import CookieOptions, OidcAuthorizationCode
from gw.wire.extauth_pass import SessionPass

#: Envoy accepts a pass up to this long past its `exp` (`clock_skew_seconds` 1, compared
#: in whole seconds): passes end earlier by as much, to last no longer than the TTL.
ENVOY_ALLOWANCE_S = 2
#: Browsers keep cookies up to 4096 bytes (name, value and attributes).
MAX_COOKIE = 4000
_HEADER = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=")
_BAD = frozenset("\r\n\0")


class Passes:
    """The session passes of one AuthConfig (`for_config` gives None without them)."""

    def __init__(self, config: AuthConfig, session_pass: SessionPass, cookie: CookieOptions):
        self.config_id = config.config_id
        self.ttl_s = session_pass.ttl_s
        self.cookie_name = session_pass.cookie_name
        self.cookie = cookie
        self._key = _unb64(session_pass.signing_key)
        self._claims = {header: f"h{i}" for i, header in enumerate(session_pass.headers)}
        self._removable = frozenset((config.user_id_header,) if config.user_id_header else ())

    @classmethod
    def for_config(cls, config: AuthConfig) -> Passes | None:
        steps = config.steps
        if config.session_pass is None or len(steps) != 1:
            return None
        oidc = steps[0].check
        if not isinstance(oidc, OidcAuthorizationCode):
            return None
        return cls(config, config.session_pass, oidc.session.cookie)

    def issue(self, allow: Allow, now: float) -> str | None:
        """The `set-cookie` of a pass for `allow`, or None when it may have none."""
        if allow.append_headers or allow.metadata or allow.response_headers:
            return None
        if allow.valid_until is None or not self._removable.issuperset(allow.remove_headers):
            return None
        expires = int(min(now + self.ttl_s, allow.valid_until)) - ENVOY_ALLOWANCE_S
        if expires <= now:
            return None
        claims: dict[str, object] = {"aud": self.config_id, "exp": expires, "iat": int(now)}
        for name, value in allow.headers:
            claim = self._claims.get(name.lower())
            if claim is None or claim in claims or _BAD.intersection(value):
                return None
            try:
                value.encode("latin-1")
            except UnicodeEncodeError:
                return None
            claims[claim] = value
        token = sign(claims, self._key)
        cookie = set_cookie(self.cookie_name, token, self.cookie, max_age=expires - int(now))
        return cookie if len(cookie) <= MAX_COOKIE else None

    def with_pass(self, decision: Decision, now: float) -> Decision:
        """`decision` with a pass cookie, when it is an allow that may have one."""
        if not isinstance(decision, Allow):
            return decision
        cookie = self.issue(decision, now)
        if cookie is None:
            return decision
        return replace(decision, set_cookies=(*decision.set_cookies, cookie))

    def cleared(self, decision: Decision) -> Decision:
        """A login's own answer (callback, logout) also deletes the pass."""
        if not isinstance(decision, Deny):
            return decision
        clear = clear_cookie(self.cookie_name, self.cookie)
        return replace(decision, set_cookies=(*decision.set_cookies, clear))


def sign(claims: dict[str, object], key: bytes) -> str:
    """A compact JWS (HS256) of `claims`."""
    payload = base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = _HEADER + b"." + payload.rstrip(b"=")
    signature = hmac.new(key, signing_input, hashlib.sha256).digest()
    return (signing_input + b"." + base64.urlsafe_b64encode(signature).rstrip(b"=")).decode()


def verify(token: str, key: bytes, audience: str, now: float) -> dict[str, object] | None:
    """The claims of a pass that `key` signed for `audience` and that has not expired (what
    Envoy checks; None otherwise). Envoy does this on the request path; this is its
    statement in Python, for the tests and for anyone reading a pass by hand."""
    head, dot, signature = token.rpartition(".")
    if not dot or head.partition(".")[0].encode() != _HEADER:
        return None
    expected = hmac.new(key, head.encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(expected, _unb64(signature)):
            return None
        claims = json.loads(_unb64(head.partition(".")[2]))
    except ValueError:
        return None
    if not isinstance(claims, dict) or claims.get("aud") != audience:
        return None
    exp = claims.get("exp")
    return claims if isinstance(exp, int) and exp > now else None


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
