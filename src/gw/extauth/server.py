"""The extauth server process: `envoy.service.auth.v3.Authorization/Check` over grpc.aio,
configured over xDS.

`Registry` holds one `Chain` per AuthConfig (its steps built by `checks`), rebuilt only for
configs that changed (unchanged ones keep their warm caches: discovery document, keys,
sessions, accepted credentials); replaced ones are closed a little later, once the checks in
flight on them are done. A config update never interrupts checks in flight, and when the
control plane goes away the last configuration keeps serving. A check for a config the
server does not know (yet) answers 503; an unexpected error answers 500 and is logged:
neither lets a request through.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from envoy.config.core.v3 import base_pb2
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from envoy.type.v3 import http_status_pb2
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2

from gw.extauth.chain import Chain
from gw.extauth.checks import Check, Shared, build_check
from gw.extauth.config import TYPE_URL, parse_resources
from gw.extauth.decisions import Allow, Decision, Deny, Request
from gw.wire.extauth import AuthConfig
from gw.xds.component import ComponentServer, Placement

log = logging.getLogger(__name__)

_OVERWRITE = base_pb2.HeaderValueOption.OVERWRITE_IF_EXISTS_OR_ADD
_APPEND = base_pb2.HeaderValueOption.APPEND_IF_EXISTS_OR_ADD
_OK = status_pb2.Status(code=code_pb2.OK)
_DENIED = status_pb2.Status(code=code_pb2.PERMISSION_DENIED)
_TEXT = (("content-type", "text/plain"), ("cache-control", "no-store"))
ALLOWED_CACHE_SIZE = 10_000
#: Seconds a replaced configuration's checks stay open for the requests still using them.
CLOSE_DELAY = 10.0


class Registry:
    """The chains by config id, and the clients their checks share."""

    def __init__(self, session_cache: float = 2.0) -> None:
        self.chains: dict[str, Chain] = {}
        self.shared = Shared(session_cache)
        self._tasks: set[asyncio.Task[None]] = set()
        #: Replaced chains, closed `CLOSE_DELAY` later.
        self._retired: set[Chain] = set()

    def apply(self, resources: Sequence[any_pb2.Any]) -> None:
        """Install the configs of an xDS response (raises ValueError: NACK, nothing kept)."""
        self.update(parse_resources(resources))

    def update(self, configs: Mapping[str, AuthConfig]) -> None:
        chains: dict[str, Chain] = {}
        built: list[Chain] = []
        try:
            for ident, config in configs.items():
                current = self.chains.get(ident)
                if current is not None and current.config == config:
                    chains[ident] = current
                    continue
                chains[ident] = self._build(config)
                built.append(chains[ident])
        except ValueError:
            for chain in built:
                self._later(chain.close())
            raise
        replaced = [c for i, c in self.chains.items() if chains.get(i) is not c]
        self.chains = chains
        for chain in replaced:
            self._retired.add(chain)
            self._later(self._close_later(chain))
        log.info("extauth: serving %d auth configs: %s", len(chains), ", ".join(sorted(chains)))

    def _build(self, config: AuthConfig) -> Chain:
        """The chain of `config` (raises ValueError, after closing what it built, when the
        server cannot run it)."""
        checks: list[Check] = []
        try:
            for step in config.steps:
                where = f"{config.config_id}/{step.name}"
                checks.append(build_check(step.check, where, self.shared))
            return Chain(config, checks)
        except ValueError:
            for check in checks:
                self._later(check.close())
            raise

    def _later(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _close_later(self, chain: Chain) -> None:
        await asyncio.sleep(CLOSE_DELAY)
        self._retired.discard(chain)
        await chain.close()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for chain in [*self.chains.values(), *self._retired]:
            await chain.close()
        await self.shared.close()


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
        chain = self.registry.chains.get(config_id)
        if chain is None:
            log.warning("extauth: no auth config %r (not received yet?)", config_id)
            decision: Decision = Deny(
                503, f"auth config {config_id} is not loaded", headers=_TEXT, set_cookies=()
            )
        else:
            try:
                decision = await chain.check(
                    Request(
                        http.path,
                        method=http.method,
                        host=http.host,
                        headers=http.headers,
                        body=http.body,
                        check_request=request,
                    )
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
        response = external_auth_pb2.CheckResponse(
            status=_OK,
            ok_response=external_auth_pb2.OkHttpResponse(
                headers=[
                    *(_header(k, v, _OVERWRITE) for k, v in decision.headers),
                    *(_header(k, v, _APPEND) for k, v in decision.append_headers),
                ],
                headers_to_remove=decision.remove_headers,
                response_headers_to_add=[
                    *(_header(k, v, _OVERWRITE) for k, v in decision.response_headers),
                    *(_header("set-cookie", c, _APPEND) for c in decision.set_cookies),
                ],
            ),
        )
        if decision.metadata:
            response.dynamic_metadata.update({k: json.loads(v) for k, v in decision.metadata})
        return response
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


def extauth_server(placement: Placement, *, session_cache: float = 2.0) -> ComponentServer:
    """The ext_authz server where `placement` says (a `gw.lifecycle.Server`: nothing
    listens before `start()`); `session_cache`: seconds a Redis session read is kept."""
    registry = Registry(session_cache)
    service = AuthorizationService(registry)
    add = partial(external_auth_pb2_grpc.add_AuthorizationServicer_to_server, service)
    return ComponentServer("extauth", placement, TYPE_URL, registry.apply, add, registry.close)
