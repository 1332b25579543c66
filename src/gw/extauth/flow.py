"""The OIDC authorization-code flow for one `oauth2.oidcAuthorizationCode` step: what to
answer Envoy for a request.

- `callbackPath` (a path, or a regular expression with `parseCallbackPathAsRegex`): finish a
  login (check the state cookie, exchange the code with PKCE and the client secret, verify
  the ID token and its nonce, store the session) and send the browser back where it started.
- `logoutPath`, `frontChannelLogout.path`: end the session (`logout.py`).
- any other path: with a valid session, let the request through with the token headers
  (`identity.py`) and the ID token in the chain's state (`jwt`); without one, start a login
  (302 to the provider; 401 with `failOnRedirect`).

Every failure is a `Deny` with a plain-text body saying what went wrong (see
docs/extauth.md): nothing reaches the upstream without a verified identity.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import re2

from gw.extauth.callback import auto_params, callback, provider_down
from gw.extauth.cookies import set_cookie
from gw.extauth.decisions import NO_STORE, Allow, Decision, Deny, Request, State, text
from gw.extauth.identity import Forwarding
from gw.extauth.logout import logout
from gw.extauth.oidc import (
    IdentityProvider,
    IdTokenExpired,
    InvalidIdToken,
    ProviderUnavailable,
)
from gw.extauth.refresh import Refresher
from gw.extauth.sessions import (
    CookieSessions,
    RedisSessions,
    SessionStore,
    StoreUnavailable,
    Tokens,
)
from gw.extauth.state import LIFETIME, LoginState, StateSealer, UsedStates, state_cookie_name
from gw.wire.extauth_oidc import OidcAuthorizationCode

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

log = logging.getLogger(__name__)


def build(oidc: OidcAuthorizationCode, where: str, shared: Shared) -> RelyingParty:
    """A relying party whose provider's metadata and keys start loading now."""
    store = oidc.session.store
    sessions: SessionStore = (
        CookieSessions(oidc.session)
        if store is None
        else RedisSessions(oidc.session, shared.redis(store), shared.session_cache)
    )
    party = RelyingParty(oidc, where, IdentityProvider(oidc, shared.http), sessions)
    party.release = (lambda: shared.release_redis(store)) if store is not None else None
    party.prefetching = asyncio.get_running_loop().create_task(party.provider.prefetch())
    return party


class RelyingParty:
    """The `Check` of `oauth2.oidcAuthorizationCode`; `where` names it in logs (and keys
    its login state: `<config id>/<step>`)."""

    def __init__(
        self,
        oidc: OidcAuthorizationCode,
        where: str,
        provider: IdentityProvider,
        sessions: SessionStore,
    ) -> None:
        self.oidc = oidc
        self.where = where
        self.provider = provider
        self.sessions = sessions
        self.sealer = StateSealer(oidc.client_secret, where)
        self.used_states = UsedStates()
        self.release: Callable[[], Awaitable[None]] | None = None
        self.prefetching: asyncio.Task[None] | None = None
        self.forwarding = Forwarding(oidc, provider)
        self.refresher = Refresher(provider, sessions, where)
        #: The state cookie's path: the callback's (the literal one, for a regex).
        self.callback_cookie_path = urlsplit(oidc.redirect_uri).path
        self._callback_regex = _compile(oidc.callback_path) if oidc.callback_path_regex else None
        # Verified ID tokens of cookie sessions: token → its `exp`.
        self._verified: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def flow(self, request: Request) -> str | None:
        """`callback`, `logout` or `frontchannel` when the request is one of the login's
        own, else None."""
        path = request.path.partition("?")[0]
        oidc = self.oidc
        if self._callback_regex is not None:
            if self._callback_regex.fullmatch(path):
                return "callback"
        elif path == oidc.callback_path:
            return "callback"
        if path == oidc.logout_path:
            return "logout"
        if path == oidc.front_channel_logout_path:
            return "frontchannel"
        return None

    def owns(self, request: Request) -> bool:
        """The login's own requests are its alone, whatever the rest of the chain says."""
        return self.flow(request) is not None

    async def check(self, request: Request, state: State) -> Decision:
        target = self.oidc.session.target_domain
        if target is not None and not _domain_matches(request.host, target):
            return text(403, f"this session is for {target} only (session targetDomain)")
        match self.flow(request):
            case "callback":
                return await callback(self, request)
            case "logout":
                return await logout(self, request, front_channel=False)
            case "frontchannel":
                return await logout(self, request, front_channel=True)
        return await self.guard(request, state)

    def later(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run `coroutine` in the background (kept until it ends, cancelled on close)."""
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        if self.prefetching is not None:
            self.prefetching.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self.release is not None:
            await self.release()

    # --- every other request -----------------------------------------------------------

    async def guard(self, request: Request, state: State) -> Decision:
        try:
            tokens = await self.sessions.load(request.cookies)
        except StoreUnavailable as exc:
            log.warning("extauth %s: session store unavailable: %s", self.where, exc)
            if self.oidc.session.fail_on_fetch_failure:
                return text(503, "session store unavailable")
            tokens = None
        if tokens is not None:
            allowed = await self._session_allows(tokens, request, state)
            if allowed is not None:
                return allowed
        return await self.login(request)

    async def _session_allows(self, tokens: Tokens, request: Request, state: State) -> Allow | None:
        """Allow for a live session (refreshing it if it may), None to log in again."""
        set_cookies: list[str] = []
        if isinstance(self.sessions, CookieSessions):
            verified = await self._verified_cookie_tokens(tokens)
            if verified is None:
                return None
            tokens = verified
        now = time.time()
        buffer = (
            self.oidc.session.store.pre_expiry_buffer_ms / 1000 if self.oidc.session.store else 0
        )
        if tokens.expires_at - buffer <= now:
            if not (self.oidc.session.allow_refreshing and tokens.refresh_token):
                return None
            refreshed = await self.refresher.refresh(tokens, request)
            if refreshed is None:
                return None
            tokens, set_cookies = refreshed
        state["jwt"] = tokens.id_token
        allowed = await self.forwarding.allow(tokens, tuple(set_cookies))
        return replace(allowed, valid_until=tokens.expires_at - buffer)

    async def _verified_cookie_tokens(self, tokens: Tokens) -> Tokens | None:
        """Cookie sessions carry their own ID token: it must verify (cached by token)."""
        expires_at = self._verified.get(tokens.id_token)
        if expires_at is None:
            try:
                claims = await self.provider.verify_id_token(tokens.id_token, nonce=None)
            except IdTokenExpired:
                return Tokens(tokens.id_token, tokens.access_token, tokens.refresh_token, 0.0)
            except InvalidIdToken as exc:
                log.info("extauth %s: session cookie refused: %s", self.where, exc)
                return None
            except ProviderUnavailable:
                return None
            expires_at = float(claims["exp"])
            if len(self._verified) > 50_000:
                self._verified.clear()
            self._verified[tokens.id_token] = expires_at
        return Tokens(tokens.id_token, tokens.access_token, tokens.refresh_token, expires_at)

    # --- starting a login ----------------------------------------------------------------

    async def login(self, request: Request) -> Deny:
        if self.oidc.fail_on_redirect:
            return text(401, "login required")
        try:
            endpoint = await self.provider.authorization_endpoint()
        except ProviderUnavailable as exc:
            return provider_down(self.where, exc)
        login = LoginState.start(self._return_to(request))
        query = {
            "response_type": "code",
            "client_id": self.oidc.client_id,
            "redirect_uri": self.oidc.redirect_uri,
            "scope": " ".join(self.oidc.scopes),
            "state": login.state,
            "nonce": login.nonce,
            "code_challenge": login.code_challenge,
            "code_challenge_method": "S256",
            **dict(self.oidc.auth_endpoint_query_params),
            **auto_params(self.oidc, request),
        }
        separator = "&" if "?" in endpoint else "?"
        cookie = set_cookie(
            state_cookie_name(login.state),
            self.sealer.seal(login),
            self.oidc.session.cookie,
            max_age=LIFETIME,
            path=self.callback_cookie_path,
            same_site="Lax",  # it must come back on the provider's cross-site redirect
        )
        location = endpoint + separator + urlencode(query)
        return Deny(302, headers=(("location", location), NO_STORE), set_cookies=(cookie,))

    def _return_to(self, request: Request) -> str:
        """Where to go after the login: the path asked for, on the app's origin (cookies
        are set there; another host of the same virtual service would not see them)."""
        app = urlsplit(self.oidc.app_url)
        return f"{app.scheme}://{app.netloc}{request.path}"


def _domain_matches(host: str, domain: str) -> bool:
    """RFC 6265 domain matching of the request's host (without its port)."""
    name = host.rpartition(":")[0] if host.count(":") == 1 else host
    name = name.lower().strip("[]")
    return name == domain or name.endswith("." + domain)


def _compile(pattern: str) -> re2._Regexp:
    try:
        return re2.compile(pattern)
    except re2.error as exc:  # stage 1 checks it: a NACK, should one get through
        raise ValueError(f"callbackPath {pattern!r} is not a regular expression: {exc}") from None
