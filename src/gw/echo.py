"""`gw echo`: a demo upstream that answers every request with the request it received.

The body is JSON: method, path, query string, headers (as received, lower-cased names), the
body as text, and the scheme of the connection (`https` when it serves TLS, see
`gw echo --tls-cert`). Tests read it to see which headers the gateway added, changed or removed;
the quick-start example routes to it. `x-echo-name` in the response tells instances apart.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


def build_app(name: str = "echo") -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        body = await request.body()
        data: dict[str, Any] = {
            "name": name,
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "query": request.url.query,
            "headers": _headers(request),
            "body": body.decode("utf-8", errors="replace"),
        }
        return JSONResponse(data, headers={"x-echo-name": name})

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]
    return Starlette(routes=[Route("/{path:path}", echo, methods=methods)])


def _headers(request: Request) -> dict[str, str]:
    """Headers by lower-cased name; repeated headers joined with `, ` as HTTP allows."""
    out: dict[str, str] = {}
    for key, value in request.headers.items():
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out
