"""Serving an ASGI app inside a process that owns its own signals (`gw up`, `gw echo`)."""

from __future__ import annotations

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
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="off", access_log=False
    )
    return EmbeddedServer(config)
