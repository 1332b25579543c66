"""The HTTP checks' side of Envoy's contract, for what the end-to-end tests cannot see: the
exact answers (what Envoy copies where), the answers left to the gRPC filter, and the
protocol itself (kept-alive connections, requests split across reads, bodies), against a
real `Registry` running a basic-auth chain on a real socket."""

from __future__ import annotations

import asyncio
import base64
import hashlib

from gw.extauth.decisions import Allow, Deny
from gw.extauth.http_checks import FALLBACK, HttpChecks, HttpCheckServer, encode, parse_head
from gw.extauth.server import AuthorizationService, Registry
from gw.wire import extauth, extauth_basic
from tests.support.ports import free_port


def test_an_allow_carries_headers_removals_cookies_and_the_decided_mark() -> None:
    allow = Allow(
        headers=(("x-id-token", "t"),),
        append_headers=(("x-groups", "a"),),
        remove_headers=("x-user-id", "x-other"),
        set_cookies=("s=1; Path=/", "t=2"),
    )
    assert encode(allow) == (
        b"HTTP/1.1 200 OK\r\nx-id-token: t\r\nx-groups: a\r\n"
        b"x-envoy-auth-headers-to-remove: x-user-id,x-other\r\n"
        b"set-cookie: s=1; Path=/\r\nset-cookie: t=2\r\n"
        b"x-gw-extauth-decided: 1\r\ncontent-length: 0\r\n\r\n"
    )


def test_a_denial_below_500_is_the_client_answer() -> None:
    deny = Deny(302, body="", headers=(("location", "https://idp/a?b=c"),), set_cookies=("n=1",))
    assert encode(deny) == (
        b"HTTP/1.1 302 Found\r\nlocation: https://idp/a?b=c\r\nset-cookie: n=1\r\n"
        b"content-length: 0\r\n\r\n"
    )
    assert encode(Deny(401, body="nope", headers=(("content-type", "text/plain"),))) == (
        b"HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\ncontent-length: 4\r\n\r\nnope"
    )


def test_what_http_cannot_carry_is_left_to_the_grpc_filter() -> None:
    assert encode(Deny(503, body="session store unavailable")) is FALLBACK
    assert encode(Allow(metadata=(("email", '"a@b"'),))) is FALLBACK
    assert encode(Allow(response_headers=(("x-note", "n"),))) is FALLBACK
    assert encode(Allow(headers=(("x-claim", "two\r\nlines"),))) is FALLBACK
    assert encode(Allow(headers=(("x-name", "名前"),))) is FALLBACK
    assert b"x-gw-extauth-decided" not in FALLBACK


def test_a_head_is_read_as_the_grpc_check_reads_a_request() -> None:
    config_id, request, length = parse_head(
        b"POST /app/x?q=1 HTTP/1.1\r\nHost: app.example.com\r\nCookie: a=1\r\n"
        b"cookie: b=2\r\nX-Gw-Extauth-Config: ns.c\r\ncontent-length: 3"
    )
    assert (config_id, length) == ("ns.c", 3)
    assert (request.method, request.path, request.host) == ("POST", "/app/x?q=1", "app.example.com")
    assert request.cookies == {"a": "1", "b": "2"}


def basic_config() -> extauth.AuthConfig:
    salt = "s4lt"
    user = extauth_basic.User(
        name="ann", salt=salt, hashed_password=hashlib.sha1(b"pw" + salt.encode()).hexdigest()
    )
    step = extauth_basic.BasicAuth(realm="gw", algorithm="sha1", users=(user,))
    return extauth.AuthConfig(
        config_id="ns.basic",
        namespace="ns",
        name="basic",
        steps=(extauth.Step(name="basic", check=step),),
        user_id_header="x-user-id",
    )


def check_request(config: str, authorization: str = "") -> bytes:
    lines = ["GET /x HTTP/1.1", "host: app", f"x-gw-extauth-config: {config}"]
    if authorization:
        lines.append(f"authorization: {authorization}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def read_answer(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
    return head + await reader.readexactly(length)


class Slow:
    """A chain whose check waits twice: a bare yield, then a future set later."""

    async def check(self, request: object) -> Deny:
        await asyncio.sleep(0)
        later = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.02, later.set_result, Deny(403))
        denial: Deny = await later
        return denial

    async def close(self) -> None:
        pass


async def test_one_connection_answers_checks_in_order() -> None:
    registry = Registry()
    registry.update({"ns.basic": basic_config()})
    port = free_port()
    server = HttpCheckServer(HttpChecks(registry), "127.0.0.1", port)
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        good = "Basic " + base64.b64encode(b"ann:pw").decode()
        # Two requests in one write, the third split in two: answered in order.
        writer.write(check_request("ns.basic", good) + check_request("ns.basic"))
        third = check_request("ns.unknown")
        writer.write(third[:10])
        await writer.drain()
        allowed = await read_answer(reader)
        assert allowed.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"x-user-id: ann\r\n" in allowed and b"x-gw-extauth-decided: 1\r\n" in allowed
        denied = await read_answer(reader)
        assert denied.startswith(b"HTTP/1.1 401 Unauthorized\r\n")
        assert b'www-authenticate: Basic realm="gw"\r\n' in denied
        writer.write(third[10:])
        assert await read_answer(reader) == FALLBACK  # not loaded: the gRPC check says so
        # A check that waits (as for Redis): the next request waits for its answer.
        registry.chains["ns.slow"] = Slow()  # type: ignore[assignment]
        writer.write(check_request("ns.slow") + check_request("ns.basic"))
        assert (await read_answer(reader)).startswith(b"HTTP/1.1 403 Forbidden\r\n")
        assert (await read_answer(reader)).startswith(b"HTTP/1.1 401 Unauthorized\r\n")
        writer.close()
    finally:
        await server.stop()
        await registry.close()


async def test_a_5xx_denial_is_replayed_by_the_grpc_check_of_the_same_request() -> None:
    from envoy.service.auth.v3 import external_auth_pb2

    registry = Registry()

    class Down:
        """A chain whose store is down (stands in for a Redis outage)."""

        calls = 0

        async def check(self, request: object) -> Deny:
            Down.calls += 1
            return Deny(503, body="session store unavailable")

    registry.chains = {"ns.c": Down()}  # type: ignore[dict-item]
    checks = HttpChecks(registry)
    _, request, _ = parse_head(
        b"GET /callback?code=1 HTTP/1.1\r\nhost: a\r\nx-request-id: r1\r\nx-gw-extauth-config: ns.c"
    )
    assert await checks.answer("ns.c", request) is FALLBACK
    grpc = external_auth_pb2.CheckRequest()
    grpc.attributes.context_extensions["config_id"] = "ns.c"
    grpc.attributes.request.http.path = "/callback?code=1"
    grpc.attributes.request.http.headers["x-request-id"] = "r1"
    response = await AuthorizationService(registry).Check(grpc, None)
    assert response.denied_response.status.code == 503
    assert response.denied_response.body == "session store unavailable"
    assert Down.calls == 1  # the callback's steps ran once
    assert registry.replays == {}
