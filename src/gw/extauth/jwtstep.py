"""The `jwt: {}` check: allows when Envoy's JWT filter verified a token for this request.

Envoy sends the payloads its JWT filter verified in the dynamic metadata of the check
(`extauth_jwt.METADATA_NAMESPACE`, one entry per provider); the host's JWT options must let
requests without a valid token continue (`allowMissingOrFailedJwt`), or the filter answers
them before the extauth server is asked. Without a verified token: `401` with
`www-authenticate: Bearer` and an empty body. The verified claims go into the chain's state
(`jwt_claims`, by provider).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gw.extauth.decisions import Allow, Decision, Deny, Request, State
from gw.wire.extauth_jwt import METADATA_NAMESPACE, JwtStep

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

DENIED = Deny(401, headers=(("www-authenticate", "Bearer"),))
ALLOWED = Allow()
STATE_KEY = "jwt_claims"


def build(config: JwtStep, where: str, shared: Shared) -> JwtCheck:
    return JwtCheck()


class JwtCheck:
    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        found = request.metadata.get(METADATA_NAMESPACE) or {}
        # A provider's `attachFailedStatusToMetadata` entry ({code, message}) is no token.
        verified = {k: v for k, v in found.items() if not _failed_status(v)}
        if not verified:
            return DENIED
        state[STATE_KEY] = verified
        return ALLOWED

    async def close(self) -> None:
        return None


def _failed_status(value: object) -> bool:
    return isinstance(value, dict) and set(value) == {"code", "message"}
