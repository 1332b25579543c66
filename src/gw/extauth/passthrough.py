"""The `passThroughAuth` check: a service of the user's decides.

- gRPC: the service implements Envoy's `Authorization/Check`. It gets the CheckRequest Envoy
  sent (every header), with the chain's state and the step's `config` in the filter
  metadata (`STATE_NAMESPACE`, `CONFIG_NAMESPACE`); an OK answer allows with the headers it
  names, and state it returns in its dynamic metadata under `STATE_NAMESPACE` replaces the
  chain's; a denial is passed on as the service gave it (403 when it gives no status).
- HTTP: a POST to `url` with the `allowedHeaders` of the request (and `headersToAdd`) and,
  when asked for, a JSON body `{"state", "filterMetadata", "body", "config"}`. 200 allows,
  with the response headers the `response` lists allow upstream (appended or overwritten)
  and to the client; `readStateFromResponse` takes the answer's `{"state": ...}` as the
  chain's state. A 4xx is passed on (status, and `allowedClientHeadersOnDenied`).

A service that cannot be reached, times out or fails (5xx, a gRPC error) makes the check
answer `503 passthrough auth service unavailable` (fail closed), or allow the request with
`failureModeAllow`. Connections are pooled per check and closed when it is replaced.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

import grpc
import httpx
from envoy.config.core.v3 import base_pb2
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from google.protobuf import json_format, struct_pb2
from google.rpc import code_pb2

from gw.extauth.decisions import Allow, Decision, Deny, Request, State, text
from gw.wire.extauth_passthrough import (
    CONFIG_NAMESPACE,
    STATE_NAMESPACE,
    PassThroughAuth,
    PassThroughGrpc,
    PassThroughHttp,
)

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

log = logging.getLogger(__name__)

UNAVAILABLE = "passthrough auth service unavailable"
_APPEND = base_pb2.HeaderValueOption.APPEND_IF_EXISTS_OR_ADD


class ServiceFailed(Exception):
    """The service could not be reached, timed out, or failed (5xx, a gRPC error)."""


def build(config: PassThroughAuth, where: str, shared: Shared) -> PassThroughCheck:
    return PassThroughCheck(config, where)


class PassThroughCheck:
    def __init__(self, config: PassThroughAuth, where: str) -> None:
        self.where = where
        self.failure_mode_allow = config.failure_mode_allow
        self.config: dict[str, Any] | None = (
            json.loads(config.config_json) if config.config_json else None
        )
        self.service: GrpcService | HttpService = (
            GrpcService(config.grpc, self.config)
            if config.grpc is not None
            else HttpService(_http(config), self.config)
        )

    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        try:
            return await self.service.ask(request, state)
        except ServiceFailed as exc:
            if self.failure_mode_allow:
                log.warning("extauth %s: %s; allowed (failureModeAllow)", self.where, exc)
                return Allow()
            log.warning("extauth %s: %s", self.where, exc)
            return text(503, UNAVAILABLE, retry=True)

    async def close(self) -> None:
        await self.service.close()


def _http(config: PassThroughAuth) -> PassThroughHttp:
    assert config.http is not None
    return config.http


class GrpcService:
    def __init__(self, config: PassThroughGrpc, step_config: dict[str, Any] | None) -> None:
        self.config = config
        self.timeout = config.connection_timeout_ms / 1000
        self.channel = grpc.aio.insecure_channel(config.address)
        self.stub = external_auth_pb2_grpc.AuthorizationStub(self.channel)
        self.step_config = _struct(step_config) if step_config is not None else None

    async def ask(self, request: Request, state: State) -> Decision:
        outgoing = external_auth_pb2.CheckRequest()
        if request.check_request is not None:
            outgoing.CopyFrom(request.check_request)
        metadata = outgoing.attributes.metadata_context.filter_metadata
        metadata[STATE_NAMESPACE].CopyFrom(_struct(state))
        if self.step_config is not None:
            metadata[CONFIG_NAMESPACE].CopyFrom(self.step_config)
        answer = await self._call(outgoing)
        returned = answer.dynamic_metadata.fields.get(STATE_NAMESPACE)
        if returned is not None and returned.HasField("struct_value"):
            state.clear()
            state.update(json_format.MessageToDict(returned.struct_value))
        if answer.status.code == code_pb2.OK:
            ok = answer.ok_response
            return Allow(
                headers=tuple(
                    (h.header.key, h.header.value)
                    for h in ok.headers
                    if h.append_action != _APPEND and not h.append.value
                ),
                append_headers=tuple(
                    (h.header.key, h.header.value)
                    for h in ok.headers
                    if h.append_action == _APPEND or h.append.value
                ),
                remove_headers=tuple(ok.headers_to_remove),
                response_headers=tuple(
                    (h.header.key, h.header.value) for h in ok.response_headers_to_add
                ),
            )
        denied = answer.denied_response
        return Deny(
            denied.status.code or 403,
            body=denied.body,
            headers=tuple((h.header.key, h.header.value) for h in denied.headers),
        )

    async def _call(self, outgoing: external_auth_pb2.CheckRequest) -> Any:
        delay = self.config.retry_base_ms / 1000
        for attempt in range(self.config.retries + 1):
            try:
                return await self.stub.Check(outgoing, timeout=self.timeout)
            except grpc.aio.AioRpcError as exc:
                retry = exc.code() == grpc.StatusCode.UNAVAILABLE
                if not retry or attempt == self.config.retries:
                    raise ServiceFailed(
                        f"{self.config.address}: {exc.code().name} {exc.details() or ''}".strip()
                    ) from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.config.retry_max_ms / 1000)
        raise AssertionError("unreachable")

    async def close(self) -> None:
        await self.channel.close()


class HttpService:
    def __init__(self, config: PassThroughHttp, step_config: dict[str, Any] | None) -> None:
        self.config = config
        self.step_config = step_config
        total = config.connection_timeout_ms / 1000
        read = config.response_header_timeout_ms / 1000 or total
        self.client = httpx.AsyncClient(
            timeout=httpx.Timeout(total, read=min(read, total)),
            limits=httpx.Limits(
                max_connections=config.max_conns,
                max_keepalive_connections=config.max_conns,
                keepalive_expiry=config.idle_timeout_ms / 1000 or None,
            ),
            follow_redirects=False,
        )
        self.added = dict(config.headers_to_add)
        self.wants_body = (
            config.pass_through_state
            or config.pass_through_filter_metadata
            or config.pass_through_body
            or step_config is not None
        )

    async def ask(self, request: Request, state: State) -> Decision:
        config = self.config
        headers = {h: v for h in config.allowed_headers if (v := request.headers.get(h))}
        headers.update(self.added)
        body = self._body(request, state) if self.wants_body else None
        try:
            answer = await asyncio.wait_for(
                self.client.post(config.url, headers=headers, json=body),
                config.connection_timeout_ms / 1000,
            )
        except (httpx.HTTPError, TimeoutError) as exc:
            raise ServiceFailed(f"POST {config.url}: {type(exc).__name__} {exc}") from None
        if answer.status_code >= 500:
            raise ServiceFailed(f"POST {config.url} answered {answer.status_code}")
        if answer.status_code != 200:
            picked = _pick(answer.headers, config.allowed_client_headers_on_denied)
            return Deny(answer.status_code, headers=picked)
        if config.read_state_from_response:
            state.clear()
            state.update(_state_of(answer))
        return Allow(
            append_headers=_pick(answer.headers, config.allowed_upstream_headers),
            headers=_pick(answer.headers, config.allowed_upstream_headers_to_overwrite),
            response_headers=_pick(answer.headers, config.allowed_client_headers_on_success),
        )

    def _body(self, request: Request, state: State) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if self.config.pass_through_state:
            body["state"] = state
        if self.config.pass_through_filter_metadata:
            body["filterMetadata"] = dict(request.metadata)
        if self.config.pass_through_body:
            body["body"] = request.body
        if self.step_config is not None:
            body["config"] = self.step_config
        return body

    async def close(self) -> None:
        await self.client.aclose()


def _pick(headers: httpx.Headers, names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((name, value) for name in names for value in headers.get_list(name))


def _state_of(answer: httpx.Response) -> dict[str, Any]:
    """The `state` object of the service's JSON answer ({} when there is none)."""
    try:
        data = answer.json()
    except ValueError:
        raise ServiceFailed(
            "the answer is not the JSON object readStateFromResponse expects"
        ) from None
    state = data.get("state") if isinstance(data, dict) else None
    if not isinstance(state, dict):
        raise ServiceFailed("the answer has no `state` object (readStateFromResponse)")
    return state


def _struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out
