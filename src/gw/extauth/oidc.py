"""The identity provider as the extauth server sees it: discovery document, signing keys,
token endpoint, and ID token verification.

The discovery document and the key set are fetched once and cached (the document for
`discoveryPollInterval`, the keys until a token names a key id they lack). A fetch runs as
a shared background task, shielded from the request that started it: when Envoy gives up on
a slow check (`requestTimeout`), the fetch still completes and the next request finds it
cached. When a refresh fails, the last good copy keeps serving.

Errors are typed so that the flow can answer each clearly: `ProviderUnavailable` (network,
timeouts, 5xx, garbage: 503), `TokenRejected` (the token endpoint refused a code or refresh
token: 401), `InvalidIdToken` (signature, issuer, audience, expiry, nonce: 401).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

from gw.wire.extauth_oidc import OidcAuthorizationCode

log = logging.getLogger(__name__)

#: Asymmetric algorithms only: an ID token signed with the client secret (HS256) or
#: unsigned (`none`) is refused.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]
CLOCK_SKEW = 60  # seconds of leeway on exp/iat/nbf
RETRY_AFTER_FAILURE = 5.0  # seconds before a failed fetch is tried again
KEYS_REFRESH_MIN = 10.0  # seconds between key set fetches forced by an unknown key id

T = TypeVar("T")


class ProviderUnavailable(Exception):
    """The identity provider could not be reached or answered nonsense."""


class TokenRejected(Exception):
    """The token endpoint refused the grant (`error` is its OAuth error code)."""

    def __init__(self, error: str, description: str = "") -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error = error


class InvalidIdToken(Exception):
    """The ID token failed verification; the message says which check."""


class IdTokenExpired(InvalidIdToken):
    """The ID token is genuine but past its `exp`: a refresh may renew the session."""


@dataclass(frozen=True, slots=True)
class Metadata:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    auth_methods: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TokenResponse:
    id_token: str | None
    access_token: str
    refresh_token: str | None
    expires_in: float | None


class Cached(Generic[T]):
    """A value fetched on demand, kept for `ttl` seconds, fetched by one shared task."""

    def __init__(self, fetch: Callable[[], Awaitable[T]], ttl: float) -> None:
        self._fetch = fetch
        self.ttl = ttl
        self.value: T | None = None
        self.fetched_at = 0.0
        self._retry_at = 0.0
        self._task: asyncio.Future[T] | None = None

    async def get(self, *, force: bool = False) -> T:
        now = time.monotonic()
        fresh = self.value is not None and now - self.fetched_at < self.ttl
        if fresh and not force:
            assert self.value is not None
            return self.value
        if self.value is not None and now < self._retry_at:
            return self.value  # the last refresh failed: serve the old copy a little longer
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return await asyncio.shield(self._task)

    async def _run(self) -> T:
        try:
            value = await self._fetch()
        except ProviderUnavailable:
            self._retry_at = time.monotonic() + RETRY_AFTER_FAILURE
            if self.value is None:
                raise
            log.warning("extauth: refresh failed; serving the cached copy", exc_info=True)
            return self.value
        finally:
            self._task = None
        self.value, self.fetched_at = value, time.monotonic()
        return value


class IdentityProvider:
    def __init__(self, config: OidcAuthorizationCode, http: httpx.AsyncClient) -> None:
        self.config = config
        self.http = http
        self.metadata = Cached(self._fetch_metadata, config.discovery_poll_interval_ms / 1000)
        self.keys = Cached(self._fetch_keys, ttl=float("inf"))

    async def prefetch(self) -> None:
        """Warm the caches (on configuration), so that first logins need no extra hop."""
        try:
            await self.metadata.get()
            await self.keys.get()
        except ProviderUnavailable as exc:
            log.warning("extauth: %s is not reachable yet: %s", self.config.issuer_url, exc)

    async def exchange_code(self, code: str, verifier: str) -> TokenResponse:
        return await self._token_request(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": self.config.redirect_uri,
                "code_verifier": verifier,
            }
        )

    async def refresh(self, refresh_token: str) -> TokenResponse:
        return await self._token_request(
            {"grant_type": "refresh_token", "refresh_token": refresh_token}
        )

    async def verify_id_token(self, token: str, *, nonce: str | None) -> dict[str, Any]:
        """The claims of a valid ID token (signature, iss, aud/azp, exp, iat, nonce)."""
        metadata = await self.metadata.get()
        keys = await self.keys.get()
        try:
            decoded = _decode(token, keys)
        except jose_errors.InvalidKeyIdError:
            if time.monotonic() - self.keys.fetched_at < KEYS_REFRESH_MIN:
                raise InvalidIdToken("signed with an unknown key") from None
            decoded = _decode(token, await self.keys.get(force=True))
        claims = decoded.claims
        registry = jwt.JWTClaimsRegistry(
            leeway=CLOCK_SKEW,
            iss={"essential": True, "value": metadata.issuer},
            aud={"essential": True, "value": self.config.client_id},
            exp={"essential": True},
            iat={"essential": True},
            sub={"essential": True},
        )
        try:
            registry.validate(claims)
        except jose_errors.ExpiredTokenError:
            raise IdTokenExpired("expired") from None
        except jose_errors.JoseError as exc:
            raise InvalidIdToken(exc.description or exc.error) from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.config.client_id:
            raise InvalidIdToken("issued to another party (azp)")
        if nonce is not None and claims.get("nonce") != nonce:
            raise InvalidIdToken("the nonce does not match this login")
        return claims

    async def authorization_endpoint(self) -> str:
        return self.config.auth_endpoint or (await self.metadata.get()).authorization_endpoint

    async def _token_request(self, form: dict[str, str]) -> TokenResponse:
        metadata = await self.metadata.get()
        config = self.config
        form.update(dict(config.token_endpoint_query_params))
        auth: tuple[str, str] | None = None
        if not config.client_secret:
            form["client_id"] = config.client_id
        elif "client_secret_basic" in metadata.auth_methods or not metadata.auth_methods:
            # RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
            auth = (quote(config.client_id, safe=""), quote(config.client_secret, safe=""))
        else:
            form.update(client_id=config.client_id, client_secret=config.client_secret)
        url = config.token_endpoint or metadata.token_endpoint
        response = await self._send("POST", url, data=form, auth=auth)
        body = _json_object(response)
        if response.status_code >= 400:
            if response.status_code < 500 and isinstance(body.get("error"), str):
                raise TokenRejected(body["error"], str(body.get("error_description") or ""))
            raise ProviderUnavailable(f"token endpoint answered {response.status_code}")
        access_token = body.get("access_token")
        if not isinstance(access_token, str):
            raise ProviderUnavailable("the token endpoint returned no access_token")
        expires_in = body.get("expires_in")
        return TokenResponse(
            id_token=body["id_token"] if isinstance(body.get("id_token"), str) else None,
            access_token=access_token,
            refresh_token=body.get("refresh_token") or None,
            expires_in=float(expires_in) if isinstance(expires_in, int | float) else None,
        )

    async def _fetch_metadata(self) -> Metadata:
        issuer = self.config.issuer_url.rstrip("/")
        response = await self._send("GET", issuer + "/.well-known/openid-configuration")
        if response.status_code != 200:
            raise ProviderUnavailable(f"discovery answered {response.status_code}")
        doc = _json_object(response)
        found = str(doc.get("issuer", ""))
        if found.rstrip("/") != issuer:
            raise ProviderUnavailable(f"discovery names issuer {found!r}, not {issuer!r}")
        try:
            return Metadata(
                issuer=found,
                authorization_endpoint=str(doc["authorization_endpoint"]),
                token_endpoint=str(doc["token_endpoint"]),
                jwks_uri=str(doc["jwks_uri"]),
                auth_methods=tuple(doc.get("token_endpoint_auth_methods_supported") or ()),
            )
        except KeyError as exc:
            raise ProviderUnavailable(f"discovery document lacks {exc.args[0]}") from None

    async def _fetch_keys(self) -> KeySet:
        url = self.config.jwks_uri or (await self.metadata.get()).jwks_uri
        response = await self._send("GET", url)
        if response.status_code != 200:
            raise ProviderUnavailable(f"key set answered {response.status_code}")
        doc = _json_object(response)
        usable = [k for k in doc.get("keys", []) if isinstance(k, dict) and k.get("use") != "enc"]
        try:
            return KeySet.import_key_set({"keys": usable})
        except (jose_errors.JoseError, ValueError, TypeError) as exc:
            raise ProviderUnavailable(f"key set is not usable: {exc}") from None

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(f"{method} {url}: {type(exc).__name__} {exc}") from None


def _decode(token: str, keys: KeySet) -> jwt.Token:
    try:
        return jwt.decode(token, keys, algorithms=ALGORITHMS)
    except jose_errors.InvalidKeyIdError:
        raise
    except jose_errors.BadSignatureError:
        raise InvalidIdToken("the signature does not verify") from None
    except (jose_errors.JoseError, ValueError) as exc:
        raise InvalidIdToken(f"not a signed JWT ({exc})") from None


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        if response.status_code >= 500 or response.status_code < 400:
            raise ProviderUnavailable(f"{response.url} did not answer with a JSON object")
        return {}
    return body
