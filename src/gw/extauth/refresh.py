"""Renewing an OIDC session that expired, with its refresh token.

A page's parallel requests all arrive with the same expired session: they share one call
to the token endpoint (a provider that rotates refresh tokens would refuse all but the
first). A new ID token from the refresh is verified; a provider that returns none keeps the
old one, and the session then lasts the new access token's `expires_in`.
"""

from __future__ import annotations

import asyncio
import logging
import time

from gw.extauth.decisions import Request
from gw.extauth.oidc import (
    IdentityProvider,
    InvalidIdToken,
    ProviderUnavailable,
    TokenRejected,
    TokenResponse,
)
from gw.extauth.sessions import RedisSessions, SessionStore, StoreUnavailable, Tokens

log = logging.getLogger(__name__)


class Refresher:
    def __init__(self, provider: IdentityProvider, sessions: SessionStore, where: str) -> None:
        self.provider = provider
        self.sessions = sessions
        self.where = where
        # Refreshes in flight by refresh token.
        self._refreshing: dict[str, asyncio.Future[TokenResponse]] = {}

    async def refresh(self, tokens: Tokens, request: Request) -> tuple[Tokens, list[str]] | None:
        """The renewed tokens and the cookies that carry them, or None (log in again)."""
        assert tokens.refresh_token is not None
        try:
            response = await self._refresh_once(tokens.refresh_token)
            claims = None
            if response.id_token is not None:
                claims = await self.provider.verify_id_token(response.id_token, nonce=None)
        except (TokenRejected, InvalidIdToken, ProviderUnavailable) as exc:
            log.info("extauth %s: refresh failed: %s", self.where, exc)
            return None
        expires_at = (
            float(claims["exp"])
            if claims is not None
            else time.time() + (response.expires_in or 300)
        )
        fresh = Tokens(
            id_token=response.id_token or tokens.id_token,
            access_token=response.access_token,
            refresh_token=response.refresh_token or tokens.refresh_token,
            expires_at=expires_at,
        )
        try:
            if isinstance(self.sessions, RedisSessions):
                await self.sessions.update(request.cookies, fresh)
                return fresh, []
            return fresh, await self.sessions.save(fresh, request.cookies)
        except StoreUnavailable:
            return None

    async def _refresh_once(self, refresh_token: str) -> TokenResponse:
        task = self._refreshing.get(refresh_token)
        if task is None:
            task = asyncio.ensure_future(self.provider.refresh(refresh_token))
            self._refreshing[refresh_token] = task
            task.add_done_callback(lambda _: self._refreshing.pop(refresh_token, None))
        return await asyncio.shield(task)
