"""`gw extauth` as its own process (the orchestrator deployment), configured by a `gw up`
control plane over xDS: logins through Envoy, token refresh with sessions in Redis, and
the last configuration kept when the control plane goes away (checked by calling the
server's gRPC Check directly, as Envoy does). Real processes throughout.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc

from tests.support.extauth_manifests import (
    auth_config,
    extauth_backends,
    extauth_settings,
    protected_app,
)
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp, Process, gw_command, gw_env
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

#: Tokens live 4 s; with the store's 2 s pre-expiry buffer a session needs a refresh after
#: about 2 s.
TOKEN_SECONDS = 4


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("extauth-standalone")
    started: list[Any] = []
    try:
        redis = RedisServer(work)
        started.append(redis)
        idp = OidcProvider(work, "--token-max-age", str(TOKEN_SECONDS))
        started.append(idp)
        echo = Echo(work, "app")
        started.append(echo)
        folder = work / "config"
        folder.mkdir()
        extauth_port = free_port()
        gw = GwUp(folder, work / "home", "--extauth-port", "0")
        started.append(gw)
        extauth = Process(
            gw_command(
                "extauth",
                "--xds",
                f"127.0.0.1:{gw.xds_port}",
                "--bind",
                "127.0.0.1",
                "--port",
                str(extauth_port),
            ),  # fmt: skip
            gw_env(work / "home"),
            work / "extauth.log",
        )
        started.append(extauth)
        (folder / "config.yaml").write_text(
            extauth_settings("5s")
            + "---"
            + extauth_backends(extauth_port, echo.port, "s3cr3t")
            + "---"
            + auth_config(
                "refresh",
                f"http://app.test:{gw.http_port}",
                idp.issuer,
                client_id="refresh-app",
                session=f'{{redis: {{cookieName: sid, options: {{host: "{redis.address}"}}}}}}',
                headers="{idTokenHeader: x-id-token, accessTokenHeader: x-access-token}",
            )
            + "---"
            + protected_app("app", "app.test:*", "refresh")
        )
        gw.wait_status("VirtualService default.app", "Accepted")
        yield {"gw": gw, "idp": idp, "redis": redis, "extauth_port": extauth_port}
    finally:
        for process in reversed(started):
            process.stop()


def test_login_and_refresh_through_the_standalone_server(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    client = Agent(gw.url, f"app.test:{gw.http_port}")
    start = client.start_login()
    assert client.get(env["idp"].login(start.headers["location"], "rita")).status_code == 302
    first = client.get("/private").json()["headers"]["x-access-token"]
    redis = env["redis"].client()
    stored = json.loads(redis.get(client.cookies["sid"]))
    assert stored["access_token"] == first and stored["refresh_token"]

    def refreshed() -> str | None:
        seen = client.get("/private")
        token = str(seen.json()["headers"]["x-access-token"])
        return token if token != first else None

    second = wait_until(refreshed, timeout=TOKEN_SECONDS * 3, what="a refreshed access token")
    assert json.loads(redis.get(client.cookies["sid"]))["access_token"] == second
    assert redis.ttl(client.cookies["sid"]) > TOKEN_SECONDS  # refreshable: lives on


def test_keeps_serving_when_the_control_plane_is_gone(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    gw.stop()  # control plane and Envoy; the extauth process stays
    request = external_auth_pb2.CheckRequest()
    request.attributes.context_extensions["config_id"] = "gw-system.refresh"
    http = request.attributes.request.http
    http.method, http.path, http.host, http.scheme = "GET", "/x", "app.test", "http"

    async def check() -> external_auth_pb2.CheckResponse:
        address = f"127.0.0.1:{env['extauth_port']}"
        async with grpc.aio.insecure_channel(address) as channel:
            stub = external_auth_pb2_grpc.AuthorizationStub(channel)
            response: external_auth_pb2.CheckResponse = await stub.Check(request, timeout=5)
            return response

    response = asyncio.run(check())
    assert response.denied_response.status.code == 302
    location = {h.header.key: h.header.value for h in response.denied_response.headers}
    assert location["location"].startswith(env["idp"].issuer + "/oauth2/authorize?")
