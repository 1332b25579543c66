"""The gRPC passthrough's retry policy, for what the end-to-end tests cannot arrange: a
service that is unavailable for a moment. A real gRPC server (grpc.aio) in the test, whose
first answers are `UNAVAILABLE`."""

from __future__ import annotations

from typing import Any

import grpc
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from google.rpc import code_pb2, status_pb2

from gw.extauth.decisions import Allow, Deny, Request
from gw.extauth.passthrough import UNAVAILABLE, PassThroughCheck
from gw.wire.extauth_passthrough import PassThroughAuth, PassThroughGrpc
from tests.support.ports import free_port


class Flaky(external_auth_pb2_grpc.AuthorizationServicer):  # type: ignore[misc]
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def Check(  # noqa: N802 (gRPC method name)
        self, request: external_auth_pb2.CheckRequest, context: Any
    ) -> external_auth_pb2.CheckResponse:
        self.calls += 1
        if self.calls <= self.failures:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "warming up")
        return external_auth_pb2.CheckResponse(status=status_pb2.Status(code=code_pb2.OK))


async def serve(failures: int) -> tuple[grpc.aio.Server, Flaky, str]:
    address = f"127.0.0.1:{free_port()}"
    server = grpc.aio.server()
    flaky = Flaky(failures)
    external_auth_pb2_grpc.add_AuthorizationServicer_to_server(flaky, server)
    server.add_insecure_port(address)
    await server.start()
    return server, flaky, address


def check(address: str, retries: int) -> PassThroughCheck:
    grpc_config = PassThroughGrpc(address=address, retries=retries, retry_base_ms=5)
    return PassThroughCheck(PassThroughAuth(grpc=grpc_config), "ns.c/pass")


async def test_retries_an_unavailable_service() -> None:
    server, flaky, address = await serve(failures=2)
    step = check(address, retries=2)
    try:
        assert isinstance(await step.check(Request("/"), {}), Allow)
        assert flaky.calls == 3
    finally:
        await step.close()
        await server.stop(None)


async def test_gives_up_after_the_retries() -> None:
    server, flaky, address = await serve(failures=5)
    step = check(address, retries=1)
    try:
        answer = await step.check(Request("/"), {})
        assert isinstance(answer, Deny) and (answer.status, answer.body) == (503, UNAVAILABLE)
        assert flaky.calls == 2
    finally:
        await step.close()
        await server.stop(None)
