"""Serving an ASGI app inside a process that owns its own signals (`gw up`, `gw echo`, the
control plane's admin server and validation webhook)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator
from typing import Any

import uvicorn


class EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to the host process: `gw up` stops all
    its components together on Ctrl-C, in order."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def embedded_server(app: Any, host: str, port: int) -> EmbeddedServer:
    return EmbeddedServer(quiet_config(app, host, port))


def quiet_config(app: Any, host: str, port: int, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for gw's servers: warnings only, no access log, no lifespan."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        access_log=False,
        **options,
    )


class AsgiServer:
    """An ASGI app as a `gw.lifecycle.Server`: `start()` returns once it listens, and raises
    OSError when it cannot (uvicorn logs why and exits; here that exit is the error)."""

    STOP_GRACE = 1.0

    def __init__(self, name: str, config: uvicorn.Config) -> None:
        self.name = name
        self.config = config
        self._server = EmbeddedServer(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._serve(), name=self.name)
        while not self._server.started and not self._task.done():
            await asyncio.sleep(0.01)
        if self._task.done():
            self._task.result()
            raise RuntimeError(f"{self.name} stopped while starting")

    async def _serve(self) -> None:
        try:
            await self._server.serve()
        except SystemExit as exc:
            where = f"{self.config.host}:{self.config.port}"
            raise OSError(f"cannot listen on {where} (uvicorn logged why)") from exc

    async def wait(self) -> None:
        assert self._task is not None, "wait() before start()"
        await asyncio.shield(self._task)

    async def stop(self) -> None:
        """uvicorn closes its listener and idle connections and lets requests in flight
        finish; what is still running after `STOP_GRACE` seconds is cancelled."""
        task = self._task
        if task is None or task.done():
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), self.STOP_GRACE)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
