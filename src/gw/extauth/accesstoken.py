"""The `oauth2.accessTokenValidation` check: the request's `Authorization: Bearer <token>`
must be an access token the identity provider vouches for.

- introspection (RFC 7662): the token is POSTed to the provider's introspection endpoint
  (with the client's credentials, HTTP Basic), which must answer `active: true`;
- jwt: the token is a JWT signed by a key of the configured key set (`kid` and `alg`
  required; keys without a `kid` or not for signatures are ignored), not expired, not
  before its `nbf`, from `issuer` and for one of `audiences` when those are set.

Then every `required_scopes` must be in the token's `scope` (space-separated), and with
`userinfo_url` the provider's userinfo answer for the token is added to its claims. A token
without all that is refused: `403`, empty body (as the established gateway answers). The
provider unreachable, failing or answering nonsense: `503 identity provider unavailable`
(fail closed). Answers are kept per token (`cache_timeout_ms`, never past `exp`), and
parallel checks of one token share one round trip.

Claims go into the chain's state (`jwtAccessToken`; `introspection` for the introspection
and userinfo answers), into headers (`claims_to_headers`) and into dynamic metadata under
the step's name (`dynamic_metadata_from_claims`: `<step>: {key: claim}`, as the established
gateway nests them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from gw.extauth.decisions import Allow, Decision, Deny, Request, State, text
from gw.extauth.jwtaccess import InvalidToken, JwtVerifier, UnknownKey, json_object
from gw.extauth.oidc import ProviderUnavailable
from gw.wire.extauth_accesstoken import (
    INTROSPECTION_STATE_KEY,
    JWT_STATE_KEY,
    AccessTokenValidation,
    Introspection,
)

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

log = logging.getLogger(__name__)

DENIED = Deny(403)
UNAVAILABLE = "identity provider unavailable"
CACHE_SIZE = 10_000
#: Seconds a refused token stays refused without asking again (at most the cache timeout).
REFUSED_TTL = 60.0


@dataclass(frozen=True, slots=True)
class Validated:
    """What a valid token gives every request that presents it."""

    state: tuple[tuple[str, Any], ...]
    allow: Allow


def build(config: AccessTokenValidation, where: str, shared: Shared) -> AccessTokenCheck:
    return AccessTokenCheck(config, where, shared.http)


class AccessTokenCheck:
    def __init__(self, config: AccessTokenValidation, where: str, http: httpx.AsyncClient) -> None:
        self.config = config
        self.where = where
        self.step = where.rsplit("/", 1)[-1]
        self.http = http
        self.jwt = JwtVerifier(config.jwt, self._send) if config.jwt else None
        self._cache: OrderedDict[str, tuple[Validated | None, float]] = OrderedDict()
        self._pending: dict[str, asyncio.Future[tuple[Validated | None, float]]] = {}

    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return DENIED
        try:
            validated = await self._validated(token)
        except ProviderUnavailable as exc:
            log.warning("extauth %s: %s", self.where, exc)
            return text(503, UNAVAILABLE, retry=True)
        if validated is None:
            return DENIED
        state.update(validated.state)
        return validated.allow

    async def close(self) -> None:
        return None

    async def _validated(self, token: str) -> Validated | None:
        now = time.monotonic()
        cached = self._cache.get(token)
        if cached is not None and cached[1] > now:
            return cached[0]
        pending = self._pending.get(token)
        if pending is None:
            pending = self._pending[token] = asyncio.ensure_future(self._validate(token))
            pending.add_done_callback(lambda _: self._pending.pop(token, None))
        validated, ttl = await asyncio.shield(pending)
        if ttl > 0:
            self._cache[token] = (validated, time.monotonic() + ttl)
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return validated

    async def _validate(self, token: str) -> tuple[Validated | None, float]:
        """The answer for `token` and how many seconds it may be kept."""
        timeout = self.config.cache_timeout_ms / 1000
        try:
            if self.config.introspection is not None:
                claims = await self._introspect(self.config.introspection, token)
                state_key = INTROSPECTION_STATE_KEY
            else:
                assert self.jwt is not None
                claims = await self.jwt.verify(token)
                state_key = JWT_STATE_KEY
            _check_scopes(claims, self.config.required_scopes)
            userinfo = await self._userinfo(token) if self.config.userinfo_url else None
        except InvalidToken as exc:
            log.debug("extauth %s: access token refused: %s", self.where, exc)
            return None, 0.0 if isinstance(exc, UnknownKey) else min(timeout, REFUSED_TTL)
        exp = claims.get("exp")
        if isinstance(exp, int | float):
            timeout = min(timeout, float(exp) - time.time())
        validated = self._answer(claims, state_key, userinfo)
        return validated, timeout

    def _answer(
        self, claims: dict[str, Any], state_key: str, userinfo: dict[str, Any] | None
    ) -> Validated | None:
        state: dict[str, Any] = {state_key: claims}
        if userinfo is not None:
            state[INTROSPECTION_STATE_KEY] = {**state.get(INTROSPECTION_STATE_KEY, {}), **userinfo}
        merged = {**(userinfo or {}), **claims}
        user = None
        attribute = self.config.introspection.user_id_attribute if self.config.introspection else ""
        if attribute:  # an attribute of the introspection answer itself
            if not isinstance(claims.get(attribute), str | int):
                log.info("extauth %s: the token has no %s: refused", self.where, attribute)
                return None
            user = str(claims[attribute])
        headers: list[tuple[str, str]] = []
        appended: list[tuple[str, str]] = []
        for mapping in self.config.claims_to_headers:
            if mapping.claim in merged:
                value = merged[mapping.claim]
                pair = (mapping.header, value if isinstance(value, str) else json.dumps(value))
                (appended if mapping.append else headers).append(pair)
        copied = {
            key: merged[claim]
            for key, claim in self.config.dynamic_metadata_from_claims
            if claim in merged
        }
        metadata = ((self.step, json.dumps(copied)),) if copied else ()
        allow = Allow(
            headers=tuple(headers), append_headers=tuple(appended), metadata=metadata, user=user
        )
        return Validated(state=tuple(state.items()), allow=allow)

    async def _introspect(self, config: Introspection, token: str) -> dict[str, Any]:
        form = {"token": token, "token_type_hint": "access_token"}
        auth = None
        if config.client_secret:
            auth = (config.client_id, config.client_secret)
        elif config.client_id:
            form["client_id"] = config.client_id
        answer = await self._send("POST", config.url, data=form, auth=auth)
        if answer.status_code != 200:
            raise ProviderUnavailable(f"introspection answered {answer.status_code}")
        body = json_object(answer)
        if body.get("active") is not True:
            raise InvalidToken("not active")
        return body

    async def _userinfo(self, token: str) -> dict[str, Any]:
        answer = await self._send(
            "GET", self.config.userinfo_url, headers={"authorization": f"Bearer {token}"}
        )
        if 400 <= answer.status_code < 500:  # the token refused (400 invalid_token, 401)
            raise InvalidToken(f"userinfo answered {answer.status_code}")
        if answer.status_code != 200:
            raise ProviderUnavailable(f"userinfo answered {answer.status_code}")
        return json_object(answer)

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(f"{method} {url}: {type(exc).__name__} {exc}") from None


def _check_scopes(claims: dict[str, Any], required: tuple[str, ...]) -> None:
    if not required:
        return
    scope = claims.get("scope")
    granted = set(scope.split()) if isinstance(scope, str) else set()
    missing = [s for s in required if s not in granted]
    if missing:
        raise InvalidToken(f"lacks the scopes {' '.join(missing)}")
