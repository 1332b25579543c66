"""One check per kind of `spec.configs[]` entry, and the table that builds each from its
wire type.

A `Check` is built once per configuration (parsing, compiling, connecting happen there, not
per request) and then answers requests: `check` decides with the chain's state, which it
may read and add to; `owns` says when a request is the check's own business whatever the
rest of the chain says (an OIDC login's callback); `close` releases what it holds once it
has been replaced. `Shared` holds what checks share across configurations: the HTTP client
and the Redis clients (one per store, kept while some check uses it).

A new kind adds one line to `BUILDERS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import httpx
import redis.asyncio as aioredis

from gw.extauth import accesstoken, apikey, basic, flow, jwtstep, ldap, opa, passthrough
from gw.extauth.decisions import Decision, Request, State
from gw.extauth.sessions import redis_client
from gw.wire import (
    extauth_accesstoken,
    extauth_apikey,
    extauth_basic,
    extauth_jwt,
    extauth_ldap,
    extauth_oidc,
    extauth_opa,
    extauth_passthrough,
)
from gw.wire.extauth import Check as WireCheck
from gw.wire.extauth_oidc import RedisStore


class Check(Protocol):
    def owns(self, request: Request) -> bool:
        """True when this check alone answers `request` (not the chain)."""
        ...

    async def check(self, request: Request, state: State) -> Decision: ...

    async def close(self) -> None: ...


class Shared:
    """Clients that outlive a configuration: checks take them here, and give Redis
    clients back on `close` (a store no check uses any more is disconnected)."""

    def __init__(self, session_cache: float = 2.0) -> None:
        #: Seconds a Redis session read is kept in memory (`gw extauth --session-cache`).
        self.session_cache = session_cache
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(5.0, connect=2.0), follow_redirects=False
        )
        self._redis: dict[RedisStore, tuple[aioredis.Redis, int]] = {}

    def redis(self, store: RedisStore) -> aioredis.Redis:
        client, users = self._redis.get(store, (None, 0))
        if client is None:
            client = redis_client(store)
        self._redis[store] = (client, users + 1)
        return client

    async def release_redis(self, store: RedisStore) -> None:
        client, users = self._redis[store]
        if users > 1:
            self._redis[store] = (client, users - 1)
            return
        del self._redis[store]
        await client.aclose()

    async def close(self) -> None:
        await self.http.aclose()
        for client, _ in self._redis.values():
            await client.aclose()
        self._redis.clear()


Builder = Callable[[Any, str, Shared], Check]

#: How each kind of wire check becomes a `Check` (config id and step name are for logs).
BUILDERS: dict[type, Builder] = {
    extauth_oidc.OidcAuthorizationCode: flow.build,
    extauth_basic.BasicAuth: basic.build,
    extauth_apikey.ApiKeyAuth: apikey.build,
    extauth_passthrough.PassThroughAuth: passthrough.build,
    extauth_jwt.JwtStep: jwtstep.build,
    extauth_accesstoken.AccessTokenValidation: accesstoken.build,
    extauth_opa.OpaAuth: opa.build,
    extauth_ldap.Ldap: ldap.build,
}


def build_check(check: WireCheck, where: str, shared: Shared) -> Check:
    return BUILDERS[type(check)](check, where, shared)
