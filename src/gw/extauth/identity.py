"""What a logged-in session hands the upstream: the tokens in headers (`headers`), claims of
the ID token and of the access token in headers (`identityToken` / `accessToken`
`claimsToHeaders`), and ID token claims as dynamic metadata (`dynamicMetadataFromClaims`).

The ID token was verified when the session was made (or, for cookie sessions, on this
request); the access token's claims are used only when it is a JWT that the provider's keys
verify (an opaque access token has none). The answer for a pair of tokens is built once and
kept (bounded), since a busy session sends the same tokens on every request.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from gw.extauth.decisions import Allow
from gw.extauth.oidc import IdentityProvider
from gw.extauth.sessions import Tokens
from gw.wire.extauth_oidc import ClaimToHeader, OidcAuthorizationCode

CACHE_SIZE = 20_000


class Forwarding:
    def __init__(self, oidc: OidcAuthorizationCode, provider: IdentityProvider) -> None:
        self.oidc = oidc
        self.provider = provider
        self._answers: dict[tuple[str, str], Allow] = {}

    async def allow(self, tokens: Tokens, set_cookies: tuple[str, ...] = ()) -> Allow:
        key = (tokens.id_token, tokens.access_token)
        answer = self._answers.get(key)
        if answer is None:
            answer = await self._build(tokens)
            if len(self._answers) >= CACHE_SIZE:
                self._answers.clear()
            self._answers[key] = answer
        if set_cookies:
            return Allow(
                headers=answer.headers,
                append_headers=answer.append_headers,
                metadata=answer.metadata,
                set_cookies=set_cookies,
            )
        return answer

    async def _build(self, tokens: Tokens) -> Allow:
        oidc = self.oidc
        headers: list[tuple[str, str]] = []
        appended: list[tuple[str, str]] = []
        for name, token in (
            (oidc.id_token_header, tokens.id_token),
            (oidc.access_token_header, tokens.access_token),
        ):
            if name and token:
                bearer = oidc.bearer_in_authorization and name == "authorization"
                headers.append((name, f"Bearer {token}" if bearer else token))
        id_claims = payload(tokens.id_token) if self._needs_id_claims() else {}
        access_claims: dict[str, Any] = {}
        if oidc.access_token_claims and tokens.access_token:
            access_claims = await self.provider.access_token_claims(tokens.access_token) or {}
        for claims, mappings in (
            (id_claims, oidc.identity_token_claims),
            (access_claims, oidc.access_token_claims),
        ):
            for mapping in mappings:
                _copy(claims, mapping, appended if mapping.append else headers)
        metadata = tuple(
            (key, json.dumps(id_claims[claim]))
            for key, claim in oidc.dynamic_metadata_from_claims
            if claim in id_claims
        )
        return Allow(headers=tuple(headers), append_headers=tuple(appended), metadata=metadata)

    def _needs_id_claims(self) -> bool:
        return bool(self.oidc.identity_token_claims or self.oidc.dynamic_metadata_from_claims)


def payload(token: str) -> dict[str, Any]:
    """The claims of a JWT that has been verified already ({} if it cannot be read)."""
    try:
        part = token.split(".")[1]
        data = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except (IndexError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _copy(claims: dict[str, Any], mapping: ClaimToHeader, into: list[tuple[str, str]]) -> None:
    if mapping.claim not in claims:
        return
    value = claims[mapping.claim]
    into.append((mapping.header, value if isinstance(value, str) else json.dumps(value)))
