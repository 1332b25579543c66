"""Dev mode (deprecated as of release 1.17): Settings `devMode: true` opens the developer
API on port 10010 (port name `dev-admin`); `devMode: false` closes it. Both work live.

| path | body |
|---|---|
| `/` | plain text `Developer API` |
| `/xds` | pretty JSON list of xDS cache keys (proxy roles) |
| `/xds/{key}` | pretty JSON of the xDS resources served under that key |
| `/api` | pretty JSON of the latest input snapshot (secret values redacted) |
| `/proxies` | pretty JSON of the generated Proxy resources |

These bodies are the established developer API's, not the admin envelope. The debug server
(9091) serves the same views and more; dev mode exists for compatibility only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from gw import api
from gw.admin.server import resource_data
from gw.asgi import EmbeddedServer, embedded_server
from gw.controlplane import ControlPlane
from gw.tracing import Trace
from gw.translator.dump import proxy_to_data, ratelimit_to_data, xds_to_data

log = logging.getLogger(__name__)

PORT_NAME = "dev-admin"
SETTINGS_NAME = "default"
DEPRECATION = (
    "devMode is deprecated as of release 1.17 and will be removed: the developer API on "
    "port %d shows what the debug server (/snapshots/*, /statuses) already shows"
)


def build_dev_app(controlplane: ControlPlane) -> Starlette:
    async def index(_: Request) -> Response:
        return PlainTextResponse("Developer API")

    async def xds_keys(_: Request) -> Response:
        return _pretty(controlplane.cache.roles())

    async def xds_of(request: Request) -> Response:
        key = request.path_params["key"]
        result = controlplane.result
        if result is not None and key == result.proxy.extauth_role:
            return _pretty(xds_to_data(result.extauth))
        if result is not None and key == result.proxy.ratelimit_role:
            return _pretty(ratelimit_to_data(result.ratelimit))
        if result is None or key not in result.served:
            return _pretty({"error": f"no xDS snapshot for key {key!r}"}, status_code=404)
        return _pretty(xds_to_data(result.served[key]))

    async def input_api(_: Request) -> Response:
        snapshot = controlplane.snapshot
        found = snapshot.resources if snapshot else {}
        return _pretty([resource_data(found[key]) for key in sorted(found)])

    async def proxies(_: Request) -> Response:
        result = controlplane.result
        return _pretty([proxy_to_data(p) for p in result.proxies] if result else [])

    return Starlette(
        routes=[
            Route("/", index),
            Route("/xds", xds_keys),
            Route("/xds/{key:path}", xds_of),
            Route("/api", input_api),
            Route("/proxies", proxies),
        ]
    )


def _pretty(data: Any, status_code: int = 200) -> Response:
    return Response(
        json.dumps(data, indent=2, sort_keys=True) + "\n",
        status_code=status_code,
        media_type="application/json",
    )


class DevMode:
    """Keeps the developer API open exactly while the Settings say `devMode: true`.

    It follows the control plane once started (a `gw.lifecycle.Server`): after every
    translation it reads `Settings gw-system.default` from the snapshot. A Settings manifest
    that does not parse leaves the endpoint as it was (the last accepted Settings keep
    applying). A port it cannot open is logged, and tried again on the next translation.
    """

    name = PORT_NAME

    def __init__(self, controlplane: ControlPlane, bind: str, port: int) -> None:
        self.controlplane = controlplane
        self.bind = bind
        self.port = port
        self._server: EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._pending: set[asyncio.Task[None]] = set()
        self._stopped = asyncio.Event()

    async def start(self) -> None:
        self.controlplane.observers.append(self.observe)

    async def wait(self) -> None:
        """Opening and closing is all it does: it never ends by itself."""
        await self._stopped.wait()

    @property
    def open(self) -> bool:
        return self._server is not None

    def observe(self, _: Trace) -> None:
        task = asyncio.get_running_loop().create_task(self.reconcile())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def wanted(self) -> bool | None:
        """devMode from the snapshot: True/False, or None when the Settings are unreadable."""
        snapshot = self.controlplane.snapshot
        if snapshot is None:
            return None
        namespace = self.controlplane.options.namespace
        key = api.ResourceKey(api.Settings.KIND, namespace, SETTINGS_NAME)
        if any(e.key == key for e in snapshot.errors):
            return None
        settings = snapshot.get(api.Settings, namespace, SETTINGS_NAME)
        return settings is not None and settings.spec.dev_mode

    async def reconcile(self) -> None:
        async with self._lock:
            wanted = self.wanted()
            if wanted is None or wanted == self.open:
                return
            if wanted:
                await self._open()
            else:
                await self._close()
                log.info("devMode is off: the developer API on port %d is closed", self.port)

    async def _open(self) -> None:
        log.warning(DEPRECATION, self.port)
        family = socket.AF_INET6 if ":" in self.bind else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((self.bind, self.port))
            sock.listen(128)
        except OSError as exc:
            sock.close()
            log.error("devMode: cannot open the developer API on port %d: %s", self.port, exc)
            return
        sock.setblocking(False)
        server = embedded_server(build_dev_app(self.controlplane), self.bind, self.port)
        self._server = server
        self._task = asyncio.create_task(server.serve(sockets=[sock]), name=PORT_NAME)
        while not server.started and not self._task.done():
            await asyncio.sleep(0.01)
        log.info("devMode is on: developer API (%s) at %s:%d", PORT_NAME, self.bind, self.port)

    async def _close(self) -> None:
        server, task = self._server, self._task
        self._server = self._task = None
        if server is None or task is None:
            return
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task

    async def stop(self) -> None:
        if self.observe in self.controlplane.observers:
            self.controlplane.observers.remove(self.observe)
        self._stopped.set()
        async with self._lock:
            await self._close()
