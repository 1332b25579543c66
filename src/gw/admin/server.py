"""The admin app: what the control plane holds at every stage, as JSON envelopes, plus the
debugging endpoints of `debug.py`.

| path | data |
|---|---|
| `/statuses` | statuses, unreadable manifests, references, every resource read and its file |
| `/snapshots/input` | the resources as read (secret values redacted) |
| `/snapshots/proxies` | the Proxy IR, one per proxy |
| `/snapshots/proxy-resources` | the Proxy resources with their statuses |
| `/snapshots/xds` | the xDS resources served, per proxy role |
| `/proxies` | connected xDS clients, their acked versions and NACKs |
| `/components` | the processes of this install (control plane, proxy, ...) and their state |
| `/tasks` | the supervised tasks of this process: running or restarting, crashes, last error |
| `/version` | the server version |
| `/console/` | the web console (HTML pages, `gw.console`) |

Every answer except `/` and `/console/` (HTML) and `/metrics` (Prometheus text) is the envelope of
`envelope.py`; an unknown path or a wrong method is an envelope too.
"""

from __future__ import annotations

import html
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from gw import __version__, defaults, supervision
from gw.admin.debug import ENDPOINTS as DEBUG_ENDPOINTS
from gw.admin.debug import debug_routes
from gw.admin.envelope import error, ok
from gw.api import Secret
from gw.api.status import State, Status
from gw.console.options import ConsoleOptions
from gw.controlplane import ControlPlane
from gw.snapshot import Source
from gw.translator import ir
from gw.translator.dump import (
    REDACTED,
    proxy_resource,
    proxy_to_data,
    ratelimit_to_data,
    xds_to_data,
)
from gw.translator.gateway.jwks import holds_key_secrets
from gw.xds.server import AdsServer

log = logging.getLogger(__name__)

ENDPOINTS = {
    "/statuses": "status of every resource (Accepted, Warning, Rejected and why)",
    "/snapshots/input": "input resources as read by the store (secrets redacted)",
    "/snapshots/proxies": "the Proxies built from them (the translator's IR)",
    "/snapshots/proxy-resources": "the Proxy resources with their statuses (gwctl get proxy)",
    "/snapshots/xds": "xDS resources served to each proxy role",
    "/proxies": "proxies connected over xDS, acked versions, NACKs",
    "/components": "processes of this install and whether they run",
    "/tasks": "long-running tasks of the control plane: crashes, last error, restarts",
    "/version": "server version",
}

#: What `/components` lists: the processes of the install and their state. The control
#: plane alone knows only itself; `gw up` passes a function that adds the proxy and
#: whatever else it supervises.
Components = Callable[[], list[dict[str, Any]]]


def build_app(
    controlplane: ControlPlane,
    ads: AdsServer,
    extra: list[Route] | None = None,
    *,
    components: Components | None = None,
    console: ConsoleOptions | None = None,
) -> Starlette:
    # The console reads this module's functions: imported here, not above.
    from gw.console.app import console_routes

    async def index(_: Request) -> HTMLResponse:
        return HTMLResponse(_index_page())

    async def statuses(_: Request) -> JSONResponse:
        return ok(status_rows(controlplane))

    async def snapshot_input(_: Request) -> JSONResponse:
        found = controlplane.snapshot.resources if controlplane.snapshot else {}
        return ok([resource_data(found[key]) for key in sorted(found)])

    async def snapshot_proxies(_: Request) -> JSONResponse:
        result = controlplane.result
        return ok([proxy_to_data(p) for p in result.proxies] if result else [])

    async def proxy_resources(_: Request) -> JSONResponse:
        return ok(proxy_resources_data(controlplane, ads))

    async def snapshot_xds(_: Request) -> JSONResponse:
        result = controlplane.result
        if result is None:
            return ok({})
        served = {role: xds_to_data(xds) for role, xds in result.served.items()}
        extauth = xds_to_data(result.extauth)
        if extauth:  # the extauth servers' AuthConfigs (client secrets redacted)
            served[result.proxy.extauth_role] = extauth
        ratelimit = ratelimit_to_data(result.ratelimit)
        if ratelimit:  # the rate-limit servers' descriptor trees
            served[result.proxy.ratelimit_role] = ratelimit
        return ok(served)

    async def proxies(_: Request) -> JSONResponse:
        return ok(proxies_data(controlplane, ads))

    async def list_components(_: Request) -> JSONResponse:
        return ok(components() if components else [control_plane_component()])

    async def version(_: Request) -> JSONResponse:
        return ok({"version": __version__})

    async def tasks(_: Request) -> JSONResponse:
        return ok(supervision.TASKS.data())

    routes = [
        Route("/", index),
        Route("/statuses", statuses),
        Route("/snapshots/input", snapshot_input),
        Route("/snapshots/proxies", snapshot_proxies),
        Route("/snapshots/proxy-resources", proxy_resources),
        Route("/snapshots/xds", snapshot_xds),
        Route("/proxies", proxies),
        Route("/components", list_components),
        Route("/tasks", tasks),
        Route("/version", version),
        *debug_routes(controlplane, ads),
        *console_routes(controlplane, ads, console or ConsoleOptions(), components),
        *(extra or []),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_error},
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=_log_request)],
    )


def proxies_data(controlplane: ControlPlane, ads: AdsServer) -> dict[str, Any]:
    translation = controlplane.translation
    return {
        "connections": [c.summary() for c in ads.connections.values()],
        "nacks": ads.nack_count,
        "translation": {
            "count": translation.count,
            "failures": translation.failures,
            "lastDurationMs": round(translation.last_duration * 1000, 3),
            "error": translation.error,
        },
    }


def proxy_resources_data(controlplane: ControlPlane, ads: AdsServer) -> list[dict[str, Any]]:
    """Each Proxy as a resource, its status with its Envoys' NACKs (`gwctl get proxy`).
    Before any translation succeeded, a failed one shows on an empty default Proxy."""
    result = controlplane.result
    if result is not None:
        proxies = result.proxies
    elif controlplane.translation.error is not None:
        options = controlplane.options
        proxies = (ir.Proxy(name=options.proxy_name, namespace=options.namespace),)
    else:
        return []
    connections = [c.summary() for c in ads.connections.values()]
    return [
        proxy_resource(p, with_nacks(controlplane.proxy_status(p.name), p, connections))
        for p in proxies
    ]


def with_nacks(
    status: Status | None, proxy: ir.Proxy, connections: list[dict[str, Any]]
) -> Status | None:
    """The Proxy's status with the NACKs of its Envoys: a proxy that refuses its latest
    configuration keeps the previous one, and its Proxy is Rejected until it accepts."""
    nacks = [
        f"Envoy {c['node']} rejected {type_name.rsplit('.', 1)[-1]} version "
        f"{state['nack']['version']}: {state['nack']['message']}"
        for c in connections
        if c["role"] == proxy.role
        for type_name, state in sorted(c["types"].items())
        if state.get("nack")
    ]
    if status is None or not nacks:
        return status
    return status.model_copy(
        update={"state": State.REJECTED, "messages": [*status.messages, *nacks]}
    )


def control_plane_component() -> dict[str, Any]:
    """This process, as `/components` lists it."""
    return {
        "name": "gw",
        "namespace": defaults.NAMESPACE,
        "role": "control plane",
        "pid": os.getpid(),
        "running": True,
        "restarts": 0,
    }


async def _http_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(str(exc.detail), status_code=exc.status_code)


async def _log_request(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    response = await call_next(request)
    log.debug("admin: %s %s -> %d", request.method, request.url.path, response.status_code)
    return response


def _index_page() -> str:
    def items(endpoints: dict[str, str]) -> str:
        return "".join(
            f'<li><a href="{html.escape(p)}">{html.escape(p)}</a> — {html.escape(d)}</li>'
            for p, d in endpoints.items()
        )

    return (
        "<h1>gw control plane</h1><p>Things to do:</p>"
        '<h2>Console</h2><ul><li><a href="/console/">/console/</a> — resources and their '
        "statuses, the route tree, explain, live traffic, proxies (web pages)</li></ul>"
        f"<h2>Snapshots and statuses</h2><ul>{items(ENDPOINTS)}</ul>"
        f"<h2>Debugging</h2><ul>{items(DEBUG_ENDPOINTS)}</ul>"
        "<p>Every endpoint but this page and /metrics answers "
        '<code>{"status": ..., "data": ..., "error": ...}</code>.</p>'
    )


def resource_data(resource: Any) -> dict[str, Any]:
    """A resource as its manifest would show it; secret values replaced."""
    data: dict[str, Any] = resource.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("status", None)
    if isinstance(resource, Secret):
        for field in ("data", "stringData"):
            if field in data:
                data[field] = {k: REDACTED for k in data[field]}
    if resource.SECRET_FIELDS:
        data = _redact_fields(data, resource.SECRET_FIELDS)
    hidden: dict[str, Any] = _hide_local_key_secrets(data)
    return hidden


def _redact_fields(data: Any, fields: frozenset[str]) -> Any:
    if isinstance(data, list):
        return [_redact_fields(v, fields) for v in data]
    if not isinstance(data, dict):
        return data
    return {k: REDACTED if k in fields else _redact_fields(v, fields) for k, v in data.items()}


def _hide_local_key_secrets(data: Any) -> Any:
    """A private or symmetric key pasted into `jwks.local.key` by mistake is refused (a
    status says so) and never shown, wherever the option sits."""
    if isinstance(data, list):
        return [_hide_local_key_secrets(v) for v in data]
    if not isinstance(data, dict):
        return data
    out = {k: _hide_local_key_secrets(v) for k, v in data.items()}
    local = out.get("jwks", {}).get("local") if isinstance(out.get("jwks"), dict) else None
    if isinstance(local, dict) and isinstance(local.get("key"), str):
        if holds_key_secrets(local["key"]):
            local["key"] = REDACTED
    return out


def status_rows(controlplane: ControlPlane) -> dict[str, Any]:
    """Statuses, input errors (with the resource they meant, when known) and the references
    resolved by the last translation: what `gwctl check` needs, for every kind."""
    snapshot = controlplane.snapshot
    rows = []
    for key, status in sorted(controlplane.store.statuses.all().items()):
        source = snapshot.sources.get(key) if snapshot else None
        rows.append(
            {
                "kind": key.kind,
                "namespace": key.namespace,
                "name": key.name,
                "source": str(source) if source else None,
                "status": status.model_dump(by_alias=True, mode="json"),
            }
        )
    errors = [
        {
            "source": str(e.source) if e.source else None,
            **_where(e.source),
            "message": e.message,
            "resource": _key_data(e.key) if e.key else None,
        }
        for e in (snapshot.errors if snapshot else ())
    ]
    result = controlplane.result
    references = [
        {"referrer": _key_data(e.referrer), "field": e.field, "referent": _key_data(e.referent)}
        for e in (result.references if result else ())
    ]
    inputs = (
        [
            {
                **_key_data(k),
                "source": str(snapshot.sources[k]) if k in snapshot.sources else None,
                **_where(snapshot.sources.get(k)),
            }
            for k in sorted(snapshot.resources)
        ]
        if snapshot
        else []
    )
    # What the install declared (gw up's own servers' Upstreams) can be referred to too. It
    # is not the user's and has no status of its own: `declared` says so to its readers.
    inputs += [
        {**_key_data(k), "source": "declared by gw up", "declared": True}
        for k in sorted(result.declared if result else ())
    ]
    return {"resources": rows, "inputErrors": errors, "references": references, "inputs": inputs}


def _where(source: Source | None) -> dict[str, Any]:
    """The file (relative to the served folder) and 1-based document number of a source, for
    tools that edit the manifest (`gwctl apply`, `delete`) or point at it (`explain`)."""
    if source is None:
        return {}
    return {"file": source.path, "document": source.document}


def _key_data(key: Any) -> dict[str, str]:
    return {"kind": key.kind, "namespace": key.namespace, "name": key.name}
