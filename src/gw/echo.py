"""`gw echo`: a demo upstream that answers every request with the request it received.

The body is JSON: method, path, query string, headers (as received, lower-cased names), the
body as text, and the scheme of the connection (`https` when it serves TLS, see
`gw echo --tls-cert`). Tests read it to see which headers the gateway added, changed or removed;
the quick-start example routes to it. `x-echo-name` in the response tells instances apart.

A request can ask for a misbehaving upstream, to try retries and timeouts:
`x-echo-delay-ms: N` answers after N milliseconds; `x-echo-status: N` answers with status N;
`x-echo-fail-first: N` answers 503 (or `x-echo-fail-status`) to the first N requests that
carry the same `x-echo-key` (the answer's `x-echo-attempt` counts them).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def build_app(name: str = "echo") -> Starlette:
    attempts: Counter[str] = Counter()

    async def echo(request: Request) -> JSONResponse:
        body = await request.body()
        headers = {"x-echo-name": name}
        status = int(request.headers.get("x-echo-status", "200"))
        delay_ms = int(request.headers.get("x-echo-delay-ms", "0"))
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
        fail_first = request.headers.get("x-echo-fail-first")
        if fail_first is not None:
            key = request.headers.get("x-echo-key", "")
            attempts[key] += 1
            headers["x-echo-attempt"] = str(attempts[key])
            if attempts[key] <= int(fail_first):
                status = int(request.headers.get("x-echo-fail-status", "503"))
        data: dict[str, Any] = {
            "name": name,
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "query": request.url.query,
            "headers": _headers(request),
            "body": body.decode("utf-8", errors="replace"),
        }
        return JSONResponse(data, status_code=status, headers=headers)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", echo, methods=methods)])


def _headers(request: Request) -> dict[str, str]:
    """Headers by lower-cased name; repeated headers joined with `, ` as HTTP allows."""
    out: dict[str, str] = {}
    for key, value in request.headers.items():
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out
