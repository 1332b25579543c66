"""JWT access tokens (`accessTokenValidation.jwt`): verified with a key set, given inline or
fetched from `remote_jwks_url` (kept `refresh_interval_ms`).

The token must name its key (`kid`) and algorithm (`alg`, asymmetric ones only); keys
without a `kid` or not for signatures are left out of the set. `exp` and `nbf` are checked
when present (60 s of clock skew), `iss` when an issuer is configured, and `aud` must name
one of `audiences` when they are. A `kid` the set lacks fetches a remote set again, at most
once per `KEYS_MIN_AGE` (key rotation), and such a refusal is not remembered.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

from gw.extauth.cached import Cached
from gw.extauth.oidc import ALGORITHMS, CLOCK_SKEW, ProviderUnavailable
from gw.wire.extauth_accesstoken import JwtValidation

#: An unknown `kid` fetches a remote key set again when it is older than this (rotation).
KEYS_MIN_AGE = 10.0

Send = Callable[..., Awaitable[httpx.Response]]


class InvalidToken(Exception):
    """The token is not valid; the message says why (logged at debug level)."""


class UnknownKey(InvalidToken):
    """Signed with a key the key set lacks (yet): not remembered, the set may rotate."""


class JwtVerifier:
    def __init__(self, config: JwtValidation, send: Send) -> None:
        self.config = config
        self._send = send
        self.keys = _keys(config, self._fetch_keys)

    async def verify(self, token: str) -> dict[str, Any]:
        """The claims of a valid token (raises InvalidToken, ProviderUnavailable)."""
        config = self.config
        header = _header(token)
        if not header.get("kid") or not header.get("alg"):
            raise InvalidToken("the JWT has no kid or alg")
        keys = await self.keys.get()
        try:
            decoded = _decode(token, keys)
        except jose_errors.InvalidKeyIdError:
            if not config.remote_jwks_url or time.monotonic() - self.keys.fetched_at < KEYS_MIN_AGE:
                raise UnknownKey("signed with an unknown key") from None
            try:
                decoded = _decode(token, await self.keys.get(force=True))
            except jose_errors.InvalidKeyIdError:
                raise UnknownKey("signed with an unknown key") from None
        claims = dict(decoded.claims)
        options: dict[str, Any] = {"exp": {"essential": False}, "nbf": {"essential": False}}
        if config.issuer:
            options["iss"] = {"essential": True, "value": config.issuer}
        try:
            jwt.JWTClaimsRegistry(leeway=CLOCK_SKEW, **options).validate(claims)
        except jose_errors.JoseError as exc:
            raise InvalidToken(exc.description or exc.error) from None
        if config.audiences:
            aud = claims.get("aud")
            given = aud if isinstance(aud, list) else [aud]
            if not set(config.audiences) & {a for a in given if isinstance(a, str)}:
                raise InvalidToken("for another audience")
        return claims

    async def _fetch_keys(self) -> KeySet:
        answer = await self._send("GET", self.config.remote_jwks_url)
        if answer.status_code != 200:
            raise ProviderUnavailable(f"key set answered {answer.status_code}")
        return key_set(json_object(answer))


def json_object(answer: httpx.Response) -> dict[str, Any]:
    """The JSON object a provider answered (ProviderUnavailable for anything else)."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ProviderUnavailable(f"{answer.url} did not answer with a JSON object")
    return body


class _Fixed:
    """A key set given inline: never fetched."""

    def __init__(self, keys: KeySet) -> None:
        self.keys = keys
        self.fetched_at = 0.0

    async def get(self, *, force: bool = False) -> KeySet:
        return self.keys


def _keys(config: JwtValidation, fetch: Any) -> Cached[KeySet] | _Fixed:
    if config.remote_jwks_url:
        return Cached(fetch, config.refresh_interval_ms / 1000, (ProviderUnavailable,))
    try:
        return _Fixed(key_set(json.loads(config.local_jwks)))
    except (ProviderUnavailable, ValueError) as exc:  # stage 1 checks it: a NACK
        raise ValueError(f"localJwks: {exc}") from None


def key_set(document: dict[str, Any]) -> KeySet:
    """The usable keys of a JWKS document: with a `kid`, and for signatures."""
    usable = [
        k
        for k in document.get("keys", [])
        if isinstance(k, dict) and k.get("kid") and k.get("use", "sig") == "sig"
    ]
    try:
        return KeySet.import_key_set({"keys": usable})
    except (jose_errors.JoseError, ValueError, TypeError) as exc:
        raise ProviderUnavailable(f"key set is not usable: {exc}") from None


def _decode(token: str, keys: KeySet) -> jwt.Token:
    try:
        return jwt.decode(token, keys, algorithms=ALGORITHMS)
    except jose_errors.InvalidKeyIdError:
        raise
    except (jose_errors.JoseError, ValueError) as exc:
        raise InvalidToken(f"the signature does not verify ({exc})") from None


def _header(token: str) -> dict[str, Any]:
    """The protected header of a compact JWS ({} when it is none)."""
    part = token.partition(".")[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError:
        return {}
    return header if isinstance(header, dict) else {}
