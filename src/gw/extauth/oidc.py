"""The identity provider as the extauth server sees it: discovery document, signing keys,
token endpoint, and ID token verification.

The discovery document and the key set are cached for `discoveryPollInterval` (`cached.py`);
a token signed with a key the cached set lacks is refused, or makes the set be fetched
again, as `jwksCacheRefreshPolicy` says. Logouts revoke tokens and end the provider's
session with its `send` and `client_auth`.

Errors are typed so that the flow can answer each clearly: `ProviderUnavailable` (network,
timeouts, 5xx, garbage: 503), `TokenRejected` (the token endpoint refused a code or refresh
token: 401), `InvalidIdToken` (signature, issuer, audience, expiry, nonce: 401).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

from gw.extauth.cached import Cached
from gw.wire.extauth_oidc import OidcAuthorizationCode

log = logging.getLogger(__name__)

#: Asymmetric algorithms only: an ID token signed with the client secret (HS256) or
#: unsigned (`none`) is refused.
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]
CLOCK_SKEW = 60  # seconds of leeway on exp/iat/nbf


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
    revocation_endpoint: str | None = None
    end_session_endpoint: str | None = None


@dataclass(frozen=True, slots=True)
class TokenResponse:
    id_token: str | None
    access_token: str
    refresh_token: str | None
    expires_in: float | None


class IdentityProvider:
    def __init__(self, config: OidcAuthorizationCode, http: httpx.AsyncClient) -> None:
        self.config = config
        self.http = http
        poll = config.discovery_poll_interval_ms / 1000
        self.metadata = Cached(self._fetch_metadata, poll, (ProviderUnavailable,))
        self.keys = Cached(self._fetch_keys, poll, (ProviderUnavailable,))
        self.algorithms = [
            a for a in ALGORITHMS if not config.id_token_algs or a in config.id_token_algs
        ]
        # `jwksCacheRefreshPolicy: maxIdpReqPerPollingInterval`: fetches for unknown keys.
        self._forced: list[float] = []

    async def prefetch(self) -> None:
        """Warm the caches (on configuration), so that first logins need no extra hop."""
        try:
            await self.metadata.get()
            await self.keys.get()
        except ProviderUnavailable as exc:
            log.warning("extauth: %s is not reachable yet: %s", self.config.issuer_url, exc)

    async def exchange_code(
        self,
        code: str,
        verifier: str,
        extra: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> TokenResponse:
        form = {
            **(extra or {}),
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.config.redirect_uri,
            "code_verifier": verifier,
        }
        return await self._token_request(form, headers)

    async def refresh(self, refresh_token: str) -> TokenResponse:
        return await self._token_request(
            {"grant_type": "refresh_token", "refresh_token": refresh_token}
        )

    async def verify_id_token(self, token: str, *, nonce: str | None) -> dict[str, Any]:
        """The claims of a valid ID token (signature, iss, aud/azp, exp, iat, nonce)."""
        metadata = await self.metadata.get()
        claims = (await self._decode(token)).claims
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

    async def access_token_claims(self, token: str) -> dict[str, Any] | None:
        """The claims of an access token that is a JWT the provider signed (its issuer
        checked, not its audience: it is meant for the upstream), else None."""
        if token.count(".") != 2:
            return None
        try:
            claims = (await self._decode(token)).claims
            metadata = await self.metadata.get()
            jwt.JWTClaimsRegistry(leeway=CLOCK_SKEW, iss={"value": metadata.issuer}).validate(
                claims
            )
        except (InvalidIdToken, ProviderUnavailable, jose_errors.JoseError):
            return None
        return claims

    async def _decode(self, token: str) -> jwt.Token:
        keys = await self.keys.get()
        try:
            return _decode(token, keys, self.algorithms)
        except jose_errors.InvalidKeyIdError:
            if not self._may_fetch_keys():
                raise InvalidIdToken("signed with an unknown key") from None
            return _decode(token, await self.keys.get(force=True), self.algorithms)

    def _may_fetch_keys(self) -> bool:
        """`jwksCacheRefreshPolicy`: whether an unknown key id may fetch the key set."""
        policy = self.config.jwks_refresh
        if policy == "always":
            return True
        if policy == "never":
            return False
        now = time.monotonic()
        window = self.config.discovery_poll_interval_ms / 1000
        self._forced = [t for t in self._forced if now - t < window]
        if len(self._forced) >= self.config.jwks_refresh_limit:
            return False
        self._forced.append(now)
        return True

    async def authorization_endpoint(self) -> str:
        return self.config.auth_endpoint or (await self.metadata.get()).authorization_endpoint

    async def _token_request(
        self, form: dict[str, str], headers: dict[str, str] | None = None
    ) -> TokenResponse:
        metadata = await self.metadata.get()
        config = self.config
        form.update(dict(config.token_endpoint_query_params))
        auth = self.client_auth(form, metadata)
        url = config.token_endpoint or metadata.token_endpoint
        response = await self.send("POST", url, data=form, auth=auth, headers=headers)
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

    def client_auth(self, form: dict[str, str], metadata: Metadata) -> tuple[str, str] | None:
        """How the client authenticates: HTTP Basic when the provider takes it (or says
        nothing), else form fields; a public client only names itself."""
        config = self.config
        methods = config.auth_methods or metadata.auth_methods
        if not config.client_secret:
            form["client_id"] = config.client_id
            return None
        if "client_secret_basic" in methods or not methods:
            # RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
            return (quote(config.client_id, safe=""), quote(config.client_secret, safe=""))
        form.update(client_id=config.client_id, client_secret=config.client_secret)
        return None

    async def _fetch_metadata(self) -> Metadata:
        issuer = self.config.issuer_url.rstrip("/")
        response = await self.send("GET", issuer + "/.well-known/openid-configuration")
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
                revocation_endpoint=_optional(doc.get("revocation_endpoint")),
                end_session_endpoint=_optional(doc.get("end_session_endpoint")),
            )
        except KeyError as exc:
            raise ProviderUnavailable(f"discovery document lacks {exc.args[0]}") from None

    async def _fetch_keys(self) -> KeySet:
        url = self.config.jwks_uri or (await self.metadata.get()).jwks_uri
        response = await self.send("GET", url)
        if response.status_code != 200:
            raise ProviderUnavailable(f"key set answered {response.status_code}")
        doc = _json_object(response)
        usable = [k for k in doc.get("keys", []) if isinstance(k, dict) and k.get("use") != "enc"]
        try:
            return KeySet.import_key_set({"keys": usable})
        except (jose_errors.JoseError, ValueError, TypeError) as exc:
            raise ProviderUnavailable(f"key set is not usable: {exc}") from None

    async def send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise ProviderUnavailable(f"{method} {url}: {type(exc).__name__} {exc}") from None


def _optional(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _decode(token: str, keys: KeySet, algorithms: list[str]) -> jwt.Token:
    try:
        return jwt.decode(token, keys, algorithms=algorithms)
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
