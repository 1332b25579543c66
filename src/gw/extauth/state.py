"""The login state: what ties an identity provider's callback to the browser that started
the login.

Starting a login makes a random `state`, `nonce` and PKCE `code_verifier`. The state goes to
the provider (and comes back on the callback); all three, with the URL to return to, go into
a short-lived cookie (`state_cookie_name(state)`, 10 minutes, on the callback path only),
sealed with AES-GCM so the browser can neither read nor forge it. A callback is accepted
only when its `state` opens the cookie of that name in the same browser: a forged state, a
state from another browser (login CSRF), an expired one, or one already used (replay) are
all refused. The key is derived from the client secret and the config id, so every replica
of the server can open what another sealed; a public client gets a per-process key.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

LIFETIME = 600  # seconds a login may take
COOKIE_PREFIX = "gw-oidc-"
_PROCESS_KEY = os.urandom(32)


@dataclass(frozen=True, slots=True)
class LoginState:
    state: str
    nonce: str
    verifier: str
    return_to: str
    expires_at: float

    @staticmethod
    def start(return_to: str) -> LoginState:
        return LoginState(
            state=secrets.token_urlsafe(24),
            nonce=secrets.token_urlsafe(24),
            verifier=secrets.token_urlsafe(48),
            return_to=return_to,
            expires_at=time.time() + LIFETIME,
        )

    @property
    def code_challenge(self) -> str:
        """PKCE S256: base64url(sha256(verifier)), unpadded."""
        digest = hashlib.sha256(self.verifier.encode()).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def state_cookie_name(state: str) -> str:
    """One cookie per login in progress, so that parallel logins (tabs, or a page whose
    sub-requests also got redirected) do not overwrite each other."""
    return COOKIE_PREFIX + hashlib.sha256(state.encode()).hexdigest()[:16]


class StateSealer:
    def __init__(self, client_secret: str, config_id: str) -> None:
        secret = client_secret.encode() if client_secret else _PROCESS_KEY
        key = HKDF(
            algorithm=hashes.SHA256(),
            length=32,
            salt=b"gw-extauth-login-state",
            info=config_id.encode(),
        ).derive(secret)
        self._aead = AESGCM(key)
        self._aad = config_id.encode()

    def seal(self, login: LoginState) -> str:
        nonce = os.urandom(12)
        plain = json.dumps(asdict(login), separators=(",", ":")).encode()
        sealed = nonce + self._aead.encrypt(nonce, plain, self._aad)
        return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()

    def open(self, value: str, state: str) -> LoginState | None:
        """The login `value` seals, if it is genuine, unexpired and for `state`."""
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            plain = self._aead.decrypt(raw[:12], raw[12:], self._aad)
            login = LoginState(**json.loads(plain))
        except (InvalidTag, ValueError, TypeError):
            return None
        if not secrets.compare_digest(login.state, state) or login.expires_at < time.time():
            return None
        return login


class UsedStates:
    """States whose callback already ran (within their lifetime): a replayed callback is
    refused here even before the provider refuses the reused code."""

    def __init__(self, limit: int = 100_000) -> None:
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._limit = limit

    def claim(self, login: LoginState) -> bool:
        """True the first time a state is claimed, False for a replay."""
        now = time.time()
        while self._seen and (
            next(iter(self._seen.values())) < now or len(self._seen) >= self._limit
        ):
            self._seen.popitem(last=False)
        if login.state in self._seen:
            return False
        self._seen[login.state] = login.expires_at
        return True
