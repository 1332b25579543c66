"""The debugging half of the debug server: log level, metrics, profiling, traces.

| method | path | what |
|---|---|---|
| GET, PUT | `/logging` | the log level: `{"level": "info"}`; PUT a JSON body to change it |
| GET | `/metrics` | Prometheus text (not an envelope: scrapers read it as is) |
| GET | `/debug/traces` | spans of recent translations, newest first (`?limit=N`) |
| GET | `/debug/pprof/profile` | CPU sample of all threads for `?seconds=N` (default 5) |
| GET | `/debug/pprof/tasks` | asyncio tasks and where each is suspended |
| GET | `/debug/pprof/threads` | every thread's stack |
| GET, PUT | `/debug/pprof/heap` | objects by type; allocation top while tracing is on |
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from gw import logs
from gw.admin import profiling
from gw.admin.envelope import error, ok
from gw.admin.metrics import CONTENT_TYPE, Metrics
from gw.controlplane import TRACES_KEPT, ControlPlane
from gw.xds.server import AdsServer

log = logging.getLogger(__name__)

ENDPOINTS = {
    "/logging": 'log level: GET shows it, PUT {"level": "debug"} changes it',
    "/metrics": "telemetry in Prometheus text format",
    "/debug/traces": "tracing spans of recent translations (store, debounce, discovery, "
    "translate, publish)",
    "/debug/pprof/profile?seconds=5": "CPU profile: sampled stacks of all threads",
    "/debug/pprof/tasks": "asyncio tasks and the stack each is suspended in",
    "/debug/pprof/threads": "stacks of all threads",
    "/debug/pprof/heap": 'objects by type; PUT {"tracing": true} to trace allocations',
}


def debug_routes(controlplane: ControlPlane, ads: AdsServer) -> list[Route]:
    metrics = Metrics(controlplane, ads)

    async def get_metrics(_: Request) -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    async def traces(request: Request) -> JSONResponse:
        limit = _number(request, "limit", default=20, low=1, high=TRACES_KEPT)
        if isinstance(limit, JSONResponse):
            return limit
        recent = list(controlplane.traces)[-int(limit) :]
        return ok([t.to_data() for t in reversed(recent)])

    return [
        Route("/logging", get_logging, methods=["GET"]),
        Route("/logging", put_logging, methods=["PUT"]),
        Route("/metrics", get_metrics),
        Route("/debug/traces", traces),
        Route("/debug/pprof/profile", profile),
        Route("/debug/pprof/tasks", tasks),
        Route("/debug/pprof/threads", threads),
        Route("/debug/pprof/heap", get_heap, methods=["GET"]),
        Route("/debug/pprof/heap", put_heap, methods=["PUT"]),
    ]


async def get_logging(_: Request) -> JSONResponse:
    return ok({"level": logs.current_level()})


async def put_logging(request: Request) -> JSONResponse:
    body = await _json_object(request)
    if isinstance(body, JSONResponse):
        return body
    level = body.get("level")
    if not isinstance(level, str):
        return error('the body must be a JSON object with a string member "level"')
    try:
        new = logs.set_level(level)
    except ValueError as exc:
        return error(str(exc))
    log.warning("log level set to %s through the debug server", new)
    return ok({"level": new})


async def profile(request: Request) -> JSONResponse:
    seconds = _number(request, "seconds", default=5, low=0.05, high=profiling.MAX_SECONDS)
    if isinstance(seconds, JSONResponse):
        return seconds
    return ok(await asyncio.to_thread(profiling.cpu_sample, seconds))


async def tasks(_: Request) -> JSONResponse:
    return ok(profiling.tasks())


async def threads(_: Request) -> JSONResponse:
    return ok(profiling.threads())


async def get_heap(_: Request) -> JSONResponse:
    return ok(await asyncio.to_thread(profiling.heap))


async def put_heap(request: Request) -> JSONResponse:
    body = await _json_object(request)
    if isinstance(body, JSONResponse):
        return body
    tracing = body.get("tracing")
    if not isinstance(tracing, bool):
        return error('the body must be a JSON object with a boolean member "tracing"')
    return ok({"tracing": profiling.set_heap_tracing(tracing)})


async def _json_object(request: Request) -> dict[str, Any] | JSONResponse:
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError as exc:
        return error(f"the body is not valid JSON: {exc}")
    if not isinstance(body, dict):
        return error("the body must be a JSON object")
    return body


def _number(
    request: Request, name: str, *, default: float, low: float, high: float
) -> float | JSONResponse:
    raw = request.query_params.get(name)
    if raw is None:
        return min(default, high)
    try:
        value = float(raw)
    except ValueError:
        return error(f"{name} must be a number, not {raw!r}")
    if not low <= value <= high:
        return error(f"{name} must be between {low:g} and {high:g}")
    return value
