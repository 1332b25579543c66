"""The `basicAuth` check: `Authorization: Basic <base64 of user:password>` against the
configured users' salted hashes (`passwords`).

A request without valid credentials gets `401` with `www-authenticate: Basic
realm="<realm>"` and an empty body, so that browsers ask for a login. Credentials that were
accepted once are remembered (by the header's exact value, bounded): hashing APR1 costs
about half a millisecond, the lookup nothing. The memory goes with the check when the
configuration changes, so a removed user or a changed password takes effect at once.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING

from gw.extauth import passwords
from gw.extauth.decisions import Allow, Decision, Deny, Request, State
from gw.wire.extauth_basic import AUTHORIZATION, PROXY_AUTHORIZATION, BasicAuth

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

ACCEPTED_CACHE_SIZE = 10_000


def build(config: BasicAuth, where: str, shared: Shared) -> BasicCheck:
    return BasicCheck(config)


class BasicCheck:
    def __init__(self, config: BasicAuth) -> None:
        self.config = config
        self.users = {u.name: u for u in config.users}
        self.denied = Deny(401, headers=(("www-authenticate", f'Basic realm="{config.realm}"'),))
        self._accepted: dict[str, Allow] = {}

    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        header = request.headers.get(AUTHORIZATION)
        if header is None and self.config.proxy_authorization:
            header = request.headers.get(PROXY_AUTHORIZATION)
        if not header:
            return self.denied
        known = self._accepted.get(header)
        if known is not None:
            return known
        user = self._verify(header)
        if user is None:
            return self.denied
        allow = Allow(user=user)
        if len(self._accepted) >= ACCEPTED_CACHE_SIZE:
            self._accepted.clear()
        self._accepted[header] = allow
        return allow

    async def close(self) -> None:
        self._accepted.clear()

    def _verify(self, header: str) -> str | None:
        """The user whose credentials `header` carries, if they are right."""
        scheme, _, encoded = header.strip().partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        name, colon, password = decoded.partition(":")
        user = self.users.get(name)
        if not colon or user is None:
            return None
        algorithm = self.config.algorithm
        if not passwords.matches(algorithm, password, user.salt, user.hashed_password):
            return None
        return name
