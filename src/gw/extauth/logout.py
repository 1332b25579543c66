"""Ending an OIDC session: `logoutPath` (the user logs out here) and
`frontChannelLogout.path` (the provider, ending its own session, loads this path in a hidden
frame of the browser).

Both delete the session (the Redis entry, and the cookies) at once. Then, in the
background so that the browser does not wait on the provider, the access token is revoked
at the revocation endpoint (discovered, or `discoveryOverride.revocationEndpoint`) and, on
`logoutPath`, the provider's end-session endpoint is told (`endSessionProperties`); a
provider that fails is logged, not retried. `logoutPath` answers 302 to `afterLogoutUrl`;
the front channel answers an empty 200 that no cache keeps.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from gw.extauth.cookies import clear_cookie
from gw.extauth.decisions import NO_STORE, Deny, Request, text
from gw.extauth.oidc import IdentityProvider, ProviderUnavailable
from gw.extauth.sessions import StoreUnavailable, Tokens

if TYPE_CHECKING:
    from gw.extauth.flow import RelyingParty

log = logging.getLogger(__name__)

FRONT_CHANNEL_HEADERS = (NO_STORE, ("pragma", "no-cache"))


async def logout(party: RelyingParty, request: Request, *, front_channel: bool) -> Deny:
    oidc = party.oidc
    try:
        tokens = await party.sessions.load(request.cookies)
        cleared = await party.sessions.delete(request.cookies)
    except StoreUnavailable as exc:
        log.warning("extauth %s: cannot delete session: %s", party.where, exc)
        cookie = oidc.session.store.cookie_name if oidc.session.store else ""
        return text(
            503,
            "session store unavailable: this browser is logged out, the stored session "
            "expires on its own",
            (clear_cookie(cookie, oidc.session.cookie),) if cookie else (),
        )
    if tokens is not None:
        party.later(_tell_provider(party, tokens, end_session=not front_channel))
    if front_channel:
        return Deny(200, headers=FRONT_CHANNEL_HEADERS, set_cookies=tuple(cleared))
    return Deny(
        302, headers=(("location", oidc.after_logout_url), NO_STORE), set_cookies=tuple(cleared)
    )


async def _tell_provider(party: RelyingParty, tokens: Tokens, *, end_session: bool) -> None:
    provider = party.provider
    calls = [_revoke(provider, tokens.access_token)] if tokens.access_token else []
    if end_session:
        calls.append(_end_session(provider, tokens.id_token))
    for outcome in await asyncio.gather(*calls, return_exceptions=True):
        if isinstance(outcome, ProviderUnavailable):
            log.warning("extauth %s: logout at the provider failed: %s", party.where, outcome)
        elif isinstance(outcome, BaseException):
            log.error("extauth %s: logout at the provider failed", party.where, exc_info=outcome)


async def _revoke(provider: IdentityProvider, token: str) -> None:
    """Revoke an access token at the revocation endpoint (RFC 7009), if there is one."""
    metadata = await provider.metadata.get()
    url = provider.config.revocation_endpoint or metadata.revocation_endpoint
    if url:
        form = {"token": token, "token_type_hint": "access_token"}
        auth = provider.client_auth(form, metadata)
        response = await provider.send("POST", url, data=form, auth=auth)
        if response.status_code >= 400:
            raise ProviderUnavailable(f"revocation answered {response.status_code}")


async def _end_session(provider: IdentityProvider, id_token: str) -> None:
    """Tell the provider's end-session endpoint, if there is one, that the session ended
    (GET or POST, as `endSessionProperties` says)."""
    metadata = await provider.metadata.get()
    config = provider.config
    url = config.end_session_endpoint or metadata.end_session_endpoint
    if url:
        params = {"id_token_hint": id_token, "client_id": config.client_id}
        if config.end_session_method == "POST":
            response = await provider.send("POST", url, data=params)
        else:
            response = await provider.send("GET", url, params=params)
        if response.status_code >= 400:
            raise ProviderUnavailable(f"end session answered {response.status_code}")
