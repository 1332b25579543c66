"""The extauth server's plain-HTTP checks: Envoy's ext_authz `http_service` asks here for
the AuthConfigs whose steps need nothing but the request (an OIDC session, basic auth, API
keys; stage 1 decides which, `translator/gateway/extauth_http.py`).

Why a second door: a gRPC check costs about 110 µs of server CPU in grpc.aio before any
auth code runs, an HTTP/1.1 request on a bare asyncio protocol about 5 µs
(`bench/authz_transport.py`). The checks themselves are the same `Chain`s, from the same
`Registry` the gRPC service uses.

The contract with Envoy (`translator/envoy/extauth_http.py` builds the other side):

- The request is the client's method and path, its `host`, the headers the checks read,
  and `x-gw-extauth-config` naming the AuthConfig (Envoy fills it in from the route's
  metadata); a body comes with a `content-length`.
- Allow: `200` with the headers for the upstream (Envoy copies the ones its filter lists),
  `x-envoy-auth-headers-to-remove`, the `set-cookie`s for the client, and
  `x-gw-extauth-decided`, which Envoy turns into dynamic metadata that keeps the gRPC
  filter behind this one from running.
- Deny with a status below 500: that status, headers, cookies and body, which Envoy
  passes to the client as they are.
- What Envoy cannot carry over HTTP (a 5xx denial, which it would replace by its
  `statusOnError`; dynamic metadata for later filters; a header value that is not one
  line; a config this server does not know): `200` *without* the decided header, so that
  the gRPC filter asks about the request again and the answer is exactly what it always
  was. A 5xx denial is kept for that gRPC check (`Registry.replays`, by the request's
  `x-request-id`, config and path), so the steps do not run twice (a login's callback
  spends its code); the rest are checked again. Those are failure paths (a session store
  or provider down), where a second call costs nothing that matters.

Connections are kept alive (Envoy pools them); requests on one connection are answered in
order, one at a time, as Envoy sends them. Each check runs in a task of its own (about
5 µs): running it eagerly in the read callback was tried and breaks the checks that call
out (httpx's cancel scopes and Redis's timeouts need a current task).
"""

from __future__ import annotations

import asyncio
import logging
import time
from http import HTTPStatus
from typing import Any

from gw.extauth.decisions import Allow, Decision, Deny, Request

log = logging.getLogger(__name__)

#: The request header naming the AuthConfig (`<namespace>.<name>`).
CONFIG_HEADER = "x-gw-extauth-config"
#: The answer header that says "decided here": Envoy's `dynamic_metadata_from_headers`
#: turns it into metadata, which the gRPC filter's `filter_enabled_metadata` reads.
DECIDED_HEADER = "x-gw-extauth-decided"
#: "Ask the gRPC filter": an allow without the decided header, which says so (where
#: session passes are on, only this header lets the gRPC check run: Envoy ignores it
#: elsewhere).
FALLBACK_HEADER = "x-gw-extauth-fallback"
FALLBACK = b"HTTP/1.1 200 OK\r\n" + FALLBACK_HEADER.encode() + b": 1\r\ncontent-length: 0\r\n\r\n"
ALLOWED_CACHE_SIZE = 10_000
#: A check request's head larger than this is refused (Envoy's own limit is 60 KiB).
MAX_HEAD = 96 * 1024
_BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


#: Denials kept for the gRPC check at most (a gRPC check that never comes, Envoy's
#: timeout or failure mode, leaves one behind).
REPLAYS = 1_000


class HttpChecks:
    """Answers check requests with the `registry`'s chains (the gRPC service's: `chains`
    by config id, and `replays`)."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self._allowed: dict[Allow, bytes] = {}

    async def answer(self, config_id: str, request: Request) -> bytes:
        chain = self.registry.chains.get(config_id)
        if chain is None:
            return FALLBACK  # the gRPC filter answers 503 "not loaded", as always
        try:
            decision = await chain.check(request)
        except Exception:  # a bug: the gRPC filter checks again (and logs it as well)
            log.exception("extauth %s: HTTP check failed", config_id)
            return FALLBACK
        if isinstance(decision, Allow):
            passes = chain.passes
            if passes is not None:  # a new pass each time: not kept
                passed = passes.with_pass(decision, time.time())
                if passed is not decision:
                    return encode(passed)
            answer = self._allowed.get(decision)
            if answer is None:
                if len(self._allowed) >= ALLOWED_CACHE_SIZE:
                    self._allowed.clear()
                answer = self._allowed[decision] = encode(decision)
            return answer
        answer = encode(decision)
        request_id = request.headers.get("x-request-id")
        if answer is FALLBACK and request_id and isinstance(decision, Deny):
            replays = self.registry.replays
            if len(replays) >= REPLAYS:
                replays.clear()
            replays[(request_id, config_id, request.path)] = decision
        return answer


def encode(decision: Decision) -> bytes:
    """The HTTP answer to Envoy for `decision` (FALLBACK where HTTP cannot carry it)."""
    if isinstance(decision, Allow):
        if decision.metadata or decision.response_headers:
            return FALLBACK
        lines = ["HTTP/1.1 200 OK"]
        lines += [f"{k}: {v}" for k, v in (*decision.headers, *decision.append_headers)]
        if decision.remove_headers:
            lines.append("x-envoy-auth-headers-to-remove: " + ",".join(decision.remove_headers))
        lines += [f"set-cookie: {c}" for c in decision.set_cookies]
        lines.append(f"{DECIDED_HEADER}: 1")
        body = b""
    else:
        if decision.status >= 500:
            return FALLBACK
        lines = [f"HTTP/1.1 {decision.status} {_phrase(decision.status)}"]
        lines += [f"{k}: {v}" for k, v in decision.headers]
        lines += [f"set-cookie: {c}" for c in decision.set_cookies]
        body = decision.body.encode()
    head = "\r\n".join(lines)
    if any(c in line for line in lines for c in "\r\n\0"):
        return FALLBACK  # a value of several lines: gRPC carries it (or refuses it)
    try:
        encoded = f"{head}\r\ncontent-length: {len(body)}\r\n\r\n".encode("latin-1")
    except UnicodeEncodeError:  # a claim beyond Latin-1: gRPC carries it as UTF-8
        return FALLBACK
    return encoded + body


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Denied"


def parse_head(head: bytes) -> tuple[str, Request, int]:
    """The config id, the request and its content length, from a request's head (without
    the blank line); raises ValueError when it is not HTTP/1.1."""
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"not a header line: {line!r}")
        name = name.strip().lower()
        value = value.strip()
        if name in headers:  # a repeated header, as Envoy's CheckRequest joins them
            value = headers[name] + ("; " if name == "cookie" else ",") + value
        headers[name] = value
    length = int(headers.get("content-length") or 0)
    config_id = headers.get(CONFIG_HEADER, "")
    request = Request(target, method=method, host=headers.get("host", ""), headers=headers)
    return config_id, request, length


class CheckProtocol(asyncio.Protocol):
    """One connection from Envoy: requests are parsed as they arrive and answered in order."""

    def __init__(self, checks: HttpChecks) -> None:
        self._checks = checks
        self._buffer = b""
        self._busy = False
        self._transport: Any = None  # uvloop's transports are not asyncio.Transport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._busy:
            self._next()

    def _next(self) -> None:
        """Start answering the next complete request in the buffer, if there is one."""
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD:
                self._refuse()
            return
        try:
            config_id, request, length = parse_head(buffer[:end])
        except ValueError:
            self._refuse()
            return
        start = end + 4
        if len(buffer) < start + length:
            return  # the body is still coming
        if length:
            request.body = buffer[start : start + length].decode("utf-8", "replace")
        self._buffer = buffer[start + length :]
        self._busy = True
        task = asyncio.get_running_loop().create_task(self._checks.answer(config_id, request))
        task.add_done_callback(self._answered)

    def _answered(self, task: asyncio.Task[bytes]) -> None:
        self._busy = False
        if self._transport is None:
            return
        if task.cancelled() or task.exception() is not None:
            self._transport.write(FALLBACK)
        else:
            self._transport.write(task.result())
        self._next()

    def _refuse(self) -> None:
        if self._transport is not None:
            self._transport.write(_BAD_REQUEST)
            self._transport.close()
        self._buffer = b""


class HttpCheckServer:
    """A `gw.lifecycle.Server`: the HTTP check endpoint on `bind:port`."""

    def __init__(self, checks: HttpChecks, bind: str, port: int) -> None:
        self.name = "extauth-http"
        self._checks = checks
        self._bind, self._port = bind, port
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: CheckProtocol(self._checks), self._bind, self._port, reuse_port=False
        )
        log.info("extauth: HTTP checks on %s:%d", self._bind, self._port)

    async def wait(self) -> None:
        """Never ends by itself (the server runs in the loop; cancelling this leaves it)."""
        assert self._server is not None, "wait() before start()"
        await asyncio.get_running_loop().create_future()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
