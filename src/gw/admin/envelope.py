"""The admin response envelope (SPEC.md): `{"status", "data", "error"}`; `error` only when
something went wrong."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse


def ok(data: Any) -> JSONResponse:
    return JSONResponse({"status": "ok", "data": data})


def error(message: str, status_code: int = 400, data: Any = None) -> JSONResponse:
    return JSONResponse(
        {"status": "error", "data": data, "error": message}, status_code=status_code
    )
