"""The admin app: what the control plane holds at every stage, as JSON envelopes.

| path | data |
|---|---|
| `/statuses` | every resource's status, plus manifests that could not be read |
| `/snapshots/input` | the resources as read (secret values redacted) |
| `/snapshots/proxies` | the Proxy IR |
| `/snapshots/xds` | the xDS resources served, per proxy role |
| `/proxies` | connected xDS clients, their acked versions and NACKs |
| `/version` | the server version |
"""

from __future__ import annotations

import html
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from gw import __version__
from gw.admin.envelope import ok
from gw.api import Secret
from gw.controlplane import ControlPlane
from gw.translator.dump import REDACTED, proxy_to_data, xds_to_data
from gw.xds.server import AdsServer

ENDPOINTS = {
    "/statuses": "status of every resource (Accepted, Warning, Rejected and why)",
    "/snapshots/input": "input resources as read by the store (secrets redacted)",
    "/snapshots/proxies": "the Proxy built from them (the translator's IR)",
    "/snapshots/xds": "xDS resources served to each proxy role",
    "/proxies": "proxies connected over xDS, acked versions, NACKs",
    "/version": "server version",
}


def build_app(
    controlplane: ControlPlane, ads: AdsServer, extra: list[Route] | None = None
) -> Starlette:
    async def index(_: Request) -> HTMLResponse:
        items = "".join(
            f'<li><a href="{p}">{html.escape(p)}</a> — {html.escape(d)}</li>'
            for p, d in ENDPOINTS.items()
        )
        return HTMLResponse(f"<h1>gw control plane</h1><p>Things to do:</p><ul>{items}</ul>")

    async def statuses(_: Request) -> JSONResponse:
        return ok(status_rows(controlplane))

    async def snapshot_input(_: Request) -> JSONResponse:
        snapshot = controlplane.snapshot
        rows = []
        if snapshot is not None:
            for resource_key in sorted(snapshot.resources):
                resource = snapshot.resources[resource_key]
                rows.append(resource_data(resource))
        return ok(rows)

    async def snapshot_proxies(_: Request) -> JSONResponse:
        result = controlplane.result
        return ok([proxy_to_data(result.proxy)] if result else [])

    async def snapshot_xds(_: Request) -> JSONResponse:
        result = controlplane.result
        return ok({result.proxy.role: xds_to_data(result.xds)} if result else {})

    async def proxies(_: Request) -> JSONResponse:
        return ok(
            {
                "connections": [c.summary() for c in ads.connections.values()],
                "nacks": ads.nack_count,
                "translation": {
                    "count": controlplane.translation.count,
                    "lastDurationMs": round(controlplane.translation.last_duration * 1000, 3),
                    "error": controlplane.translation.error,
                },
            }
        )

    async def version(_: Request) -> JSONResponse:
        return ok({"version": __version__})

    routes = [
        Route("/", index),
        Route("/statuses", statuses),
        Route("/snapshots/input", snapshot_input),
        Route("/snapshots/proxies", snapshot_proxies),
        Route("/snapshots/xds", snapshot_xds),
        Route("/proxies", proxies),
        Route("/version", version),
        *(extra or []),
    ]
    return Starlette(routes=routes)


def resource_data(resource: Any) -> dict[str, Any]:
    """A resource as its manifest would show it; secret values replaced."""
    data: dict[str, Any] = resource.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("status", None)
    if isinstance(resource, Secret):
        for field in ("data", "stringData"):
            if field in data:
                data[field] = {k: REDACTED for k in data[field]}
    return data


def status_rows(controlplane: ControlPlane) -> dict[str, Any]:
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
        {"source": str(e.source) if e.source else None, "message": e.message}
        for e in (snapshot.errors if snapshot else ())
        if e.key is None
    ]
    return {"resources": rows, "inputErrors": errors}
