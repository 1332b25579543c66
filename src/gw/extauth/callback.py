"""The end of an OIDC login: the provider sends the browser back to `callbackPath`.

The callback must carry the state cookie sealed for its `state` (the same browser, within
10 minutes, once: `state.py`); then the code is exchanged at the token endpoint with the
PKCE verifier and the client secret (plus `autoMapFromMetadata`'s values, and the new
session's id in `redis.headerName`), the ID token is verified with the login's nonce, the
session is stored, and the browser goes back to the URL it first asked for. Each failure is
a plain-text answer saying what went wrong.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from gw.extauth.cookies import clear_cookie
from gw.extauth.decisions import NO_STORE, Deny, Request, text
from gw.extauth.oidc import InvalidIdToken, ProviderUnavailable, TokenRejected
from gw.extauth.sessions import RedisSessions, StoreUnavailable, Tokens
from gw.extauth.state import state_cookie_name
from gw.wire.extauth_oidc import OidcAuthorizationCode

if TYPE_CHECKING:
    from gw.extauth.flow import RelyingParty

log = logging.getLogger(__name__)


async def callback(party: RelyingParty, request: Request) -> Deny:
    query = dict(parse_qsl(urlsplit(request.path).query))
    state = query.get("state", "")
    cookie_name = state_cookie_name(state)
    options = party.oidc.session.cookie
    clear = (clear_cookie(cookie_name, options, path=party.callback_cookie_path),)
    if "error" in query:
        reason = query["error"] + (
            f": {query['error_description']}" if "error_description" in query else ""
        )
        return text(401, f"login failed: the identity provider answered {reason}", clear)
    login = party.sealer.open(request.cookies.get(cookie_name, ""), state) if state else None
    if login is None or "code" not in query:
        return text(
            400,
            "login failed: this callback does not belong to a login started in this "
            "browser (unknown, expired or forged state); start again",
            clear,
        )
    if not party.used_states.claim(login):
        return text(400, "login failed: this login was already completed (replayed state)", clear)
    sid, headers = _new_session_id(party)
    try:
        response = await party.provider.exchange_code(
            query["code"], login.verifier, auto_params(party.oidc, request), headers
        )
        if response.id_token is None:
            raise InvalidIdToken("the token endpoint returned no id_token")
        claims = await party.provider.verify_id_token(response.id_token, nonce=login.nonce)
    except TokenRejected as exc:
        return text(
            401, f"login failed: the identity provider refused the code ({exc.error})", clear
        )
    except InvalidIdToken as exc:
        log.warning("extauth %s: ID token refused: %s", party.where, exc)
        return text(401, f"login failed: the ID token is not valid: {exc}", clear)
    except ProviderUnavailable as exc:
        return provider_down(party.where, exc, clear)
    tokens = Tokens(
        id_token=response.id_token,
        access_token=response.access_token,
        refresh_token=response.refresh_token,
        expires_at=float(claims["exp"]),
    )
    try:
        cookies = await party.sessions.save(tokens, request.cookies, sid)
    except StoreUnavailable as exc:
        log.warning("extauth %s: cannot store session: %s", party.where, exc)
        return text(503, "session store unavailable", clear)
    log.info("extauth %s: %s logged in", party.where, _subject(claims))
    return Deny(
        302, headers=(("location", login.return_to), NO_STORE), set_cookies=(*clear, *cookies)
    )


def auto_params(oidc: OidcAuthorizationCode, request: Request) -> dict[str, str]:
    """`autoMapFromMetadata`: the values of its metadata namespace (scalars; gw's own
    whole-header keys of a transformation stage, `@<header>`, left out)."""
    namespace = oidc.auto_map_namespace
    if namespace is None:
        return {}
    values = request.metadata.get(namespace) or {}
    return {
        k: v if isinstance(v, str) else json.dumps(v)
        for k, v in values.items()
        if isinstance(v, str | int | float | bool) and not k.startswith("@")
    }


def provider_down(where: str, exc: Exception, set_cookies: tuple[str, ...] = ()) -> Deny:
    log.warning("extauth %s: identity provider unavailable: %s", where, exc)
    return text(503, "identity provider unavailable", set_cookies, retry=True)


def _new_session_id(party: RelyingParty) -> tuple[str | None, dict[str, str] | None]:
    """The id of the session a login will make, and the header that shows it to the
    token endpoint (`redis.headerName`), when one is wanted."""
    header = party.oidc.session.session_id_header
    if header is None or not isinstance(party.sessions, RedisSessions):
        return None, None
    sid = party.sessions.new_id()
    return sid, {header: sid}


def _subject(claims: dict[str, Any]) -> str:
    return str(claims.get("email") or claims.get("sub"))
