"""The extauth server process: `envoy.service.auth.v3.Authorization/Check` over grpc.aio,
configured over xDS.

`Registry` holds one `RelyingParty` per AuthConfig, rebuilt only for configs that changed
(unchanged ones keep their warm caches: discovery document, keys, sessions). A config
update never interrupts checks in flight, and when the control plane goes away the last
configuration keeps serving. A check for a config the server does not know (yet) answers
503; an unexpected error answers 500 and is logged: neither lets a request through.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import httpx
import redis.asyncio as aioredis
from envoy.config.core.v3 import base_pb2
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from envoy.type.v3 import http_status_pb2
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2

from gw.extauth.config import TYPE_URL, parse_resources
from gw.extauth.cookies import parse_cookies
from gw.extauth.decisions import Allow, Decision, Deny, Request
from gw.extauth.flow import RelyingParty
from gw.extauth.oidc import IdentityProvider
from gw.extauth.sessions import CookieSessions, RedisSessions, SessionStore, redis_client
from gw.wire.extauth import AuthConfig
from gw.wire.extauth_oidc import RedisStore
from gw.xds.component import ComponentServer, Placement

log = logging.getLogger(__name__)

_OVERWRITE = base_pb2.HeaderValueOption.OVERWRITE_IF_EXISTS_OR_ADD
_APPEND = base_pb2.HeaderValueOption.APPEND_IF_EXISTS_OR_ADD
_OK = status_pb2.Status(code=code_pb2.OK)
_DENIED = status_pb2.Status(code=code_pb2.PERMISSION_DENIED)
_TEXT = (("content-type", "text/plain"), ("cache-control", "no-store"))
ALLOWED_CACHE_SIZE = 10_000


class Registry:
    """The relying parties by config id, and the clients they share."""

    def __init__(self) -> None:
        self.parties: dict[str, RelyingParty] = {}
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(5.0, connect=2.0), follow_redirects=False
        )
        self._redis: dict[RedisStore, aioredis.Redis] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def apply(self, resources: Sequence[any_pb2.Any]) -> None:
        """Install the configs of an xDS response (raises ValueError: NACK, nothing kept)."""
        self.update(parse_resources(resources))

    def update(self, configs: Mapping[str, AuthConfig]) -> None:
        parties: dict[str, RelyingParty] = {}
        for ident, config in configs.items():
            current = self.parties.get(ident)
            if current is not None and current.config == config:
                parties[ident] = current
                continue
            provider = IdentityProvider(config.oidc, self.http)
            parties[ident] = RelyingParty(config, provider, self._sessions(config))
            task = asyncio.get_running_loop().create_task(provider.prefetch())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.parties = parties
        in_use = {p.config.oidc.session.store for p in parties.values()}
        for store in [s for s in self._redis if s not in in_use]:
            client = self._redis.pop(store)
            self._later(client.aclose())
        log.info("extauth: serving %d auth configs: %s", len(parties), ", ".join(sorted(parties)))

    def _sessions(self, config: AuthConfig) -> SessionStore:
        session = config.oidc.session
        if session.store is None:
            return CookieSessions(session)
        client = self._redis.get(session.store)
        if client is None:
            client = self._redis[session.store] = redis_client(session.store)
        return RedisSessions(session, client)

    def _later(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self.http.aclose()
        for client in self._redis.values():
            await client.aclose()


class AuthorizationService(external_auth_pb2_grpc.AuthorizationServicer):  # type: ignore[misc]
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        #: Built answers for recent `Allow`s: a logged-in browser gets the same one on each
        #: request (messages are only read by the serializer, so sharing one is safe).
        self._allowed: dict[Allow, external_auth_pb2.CheckResponse] = {}

    async def Check(  # noqa: N802 (gRPC method name)
        self, request: external_auth_pb2.CheckRequest, context: Any
    ) -> external_auth_pb2.CheckResponse:
        attributes = request.attributes
        http = attributes.request.http
        config_id = attributes.context_extensions.get("config_id", "")
        party = self.registry.parties.get(config_id)
        if party is None:
            log.warning("extauth: no auth config %r (not received yet?)", config_id)
            decision: Decision = Deny(
                503, f"auth config {config_id} is not loaded", headers=_TEXT, set_cookies=()
            )
        else:
            cookie = http.headers.get("cookie")
            try:
                decision = await party.check(
                    Request(path=http.path, cookies=parse_cookies(cookie) if cookie else {})
                )
            except Exception:  # a bug must deny, never crash the server or allow
                log.exception("extauth %s: check failed", config_id)
                decision = Deny(500, "extauth: internal error", headers=_TEXT)
        if isinstance(decision, Allow):
            response = self._allowed.get(decision)
            if response is None:
                if len(self._allowed) >= ALLOWED_CACHE_SIZE:
                    self._allowed.clear()
                response = self._allowed[decision] = check_response(decision)
            return response
        return check_response(decision)


def check_response(decision: Decision) -> external_auth_pb2.CheckResponse:
    if isinstance(decision, Allow):
        return external_auth_pb2.CheckResponse(
            status=_OK,
            ok_response=external_auth_pb2.OkHttpResponse(
                headers=[_header(k, v, _OVERWRITE) for k, v in decision.headers],
                response_headers_to_add=[
                    _header("set-cookie", c, _APPEND) for c in decision.set_cookies
                ],
            ),
        )
    headers = [_header(k, v, _OVERWRITE) for k, v in decision.headers]
    headers.extend(_header("set-cookie", c, _APPEND) for c in decision.set_cookies)
    return external_auth_pb2.CheckResponse(
        status=_DENIED,
        denied_response=external_auth_pb2.DeniedHttpResponse(
            status=http_status_pb2.HttpStatus(code=decision.status),
            headers=headers,
            body=decision.body,
        ),
    )


def _header(key: str, value: str, action: int) -> base_pb2.HeaderValueOption:
    return base_pb2.HeaderValueOption(
        header=base_pb2.HeaderValue(key=key, value=value), append_action=action
    )


def extauth_server(placement: Placement) -> ComponentServer:
    """The ext_authz server where `placement` says (a `gw.lifecycle.Server`: nothing
    listens before `start()`)."""
    registry = Registry()
    service = AuthorizationService(registry)
    add = partial(external_auth_pb2_grpc.add_AuthorizationServicer_to_server, service)
    return ComponentServer("extauth", placement, TYPE_URL, registry.apply, add, registry.close)
