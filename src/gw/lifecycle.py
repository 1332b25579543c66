"""The servers of a gw process, started and stopped together.

Every long-running part of a process (the xDS server, the control-plane loop, the admin
server, Envoy's supervisor, the extauth and rate-limit servers, the echo upstream, the
validation webhook, leader election) is a `Server`:

- `start()` returns once it serves, and raises when it cannot (a port taken);
- `wait()` returns or raises only when it ends by itself, which is always a failure
  (cancelling a `wait()` must leave the server running);
- `stop()` ends it and releases what it holds.

`serve()` runs a set of them: it starts them in order, runs until SIGINT/SIGTERM or the first
failure, and stops the started ones in reverse order, going on past one that fails to stop.
Every failure is logged with the server's name; `serve()` then raises `Failure`, so that the
process exits non-zero. A `TaskServer` does not end by itself: its coroutine is supervised
(`gw.supervision`), logged, recorded and started again with back-off when it crashes, so
that one bad input or one bug never silently stops a part of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from gw.supervision import supervise

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Server(Protocol):
    name: str

    async def start(self) -> None: ...

    async def wait(self) -> None: ...

    async def stop(self) -> None: ...


class Failure(Exception):
    """A server could not start, or ended by itself."""

    def __init__(self, server: str, reason: BaseException) -> None:
        super().__init__(f"{server} failed: {reason}")
        self.server = server
        self.reason = reason


class TaskServer:
    """A server that is one coroutine: `run()` as a supervised task, started again with
    back-off whenever it crashes. `stop`, when given, asks `run` to end (Envoy's
    supervisor stops Envoy); the task is cancelled in any case. `ready`, when given, is
    awaited by `start()` (the control plane's first translation)."""

    def __init__(
        self,
        name: str,
        run: Callable[[], Coroutine[Any, Any, None]],
        stop: Callable[[], Awaitable[None]] | None = None,
        *,
        ready: Callable[[], Awaitable[Any]] | None = None,
    ) -> None:
        self.name = name
        self._run = run
        self._stop = stop
        self._ready = ready
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(
            supervise(self.name, self._run, stopping=lambda: self._stopping), name=self.name
        )
        if self._ready is not None:
            ready = asyncio.ensure_future(self._ready())
            await asyncio.wait([ready, self._task], return_when=asyncio.FIRST_COMPLETED)
            ready.cancel()

    async def wait(self) -> None:
        assert self._task is not None, "wait() before start()"
        await asyncio.shield(self._task)

    async def stop(self) -> None:
        self._stopping = True
        task = self._task
        if task is None or task.done():
            return  # not started, or ended already (and `wait()` told why)
        if self._stop is not None:
            await self._stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def serve(
    servers: Sequence[Server],
    *,
    on_started: Callable[[], None] = lambda: None,
    on_stopping: Callable[[], None] = lambda: None,
) -> None:
    """Start `servers` in order, run them until a signal or the first failure, stop them in
    reverse order. `on_started` runs once all serve, `on_stopping` before they stop.

    Returns after a signal; raises `Failure` when a server could not start or ended."""
    started: list[Server] = []
    failure: Failure | None = None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    try:
        for server in servers:
            if not await _start(server, stop):
                started.append(server)  # a signal came while it started: stop it too
                break
            started.append(server)
        else:
            on_started()
            failure = await _first_failure(started, stop)
        on_stopping()
    finally:
        await _stop_all(started)
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)
    if failure is not None:
        raise failure


async def _start(server: Server, stop: asyncio.Event) -> bool:
    """Start one server; False when a signal came first. A start can take a while (the
    control plane waits for its first translation): Ctrl-C must not wait for it."""
    starting = asyncio.ensure_future(server.start())
    signalled = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([starting, signalled], return_when=asyncio.FIRST_COMPLETED)
    finally:
        signalled.cancel()
    if not starting.done():
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await starting
        return False
    try:
        starting.result()
    except Exception as exc:  # whatever stops a start is that server's failure
        log.error("%s cannot start: %s", server.name, exc)
        raise Failure(server.name, exc) from exc
    return True


async def _first_failure(servers: Sequence[Server], stop: asyncio.Event) -> Failure | None:
    """None when `stop` is set first; else the failure of the first server to end."""
    stopped: asyncio.Task[Any] = asyncio.create_task(stop.wait())
    waits: dict[asyncio.Task[Any], Server] = {
        asyncio.create_task(s.wait(), name=s.name): s for s in servers
    }
    try:
        done, _ = await asyncio.wait([stopped, *waits], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in [stopped, *waits]:
            task.cancel()
    for task in done:
        server = waits.get(task)
        if server is not None and not task.cancelled():
            reason = task.exception() or RuntimeError("it stopped on its own")
            log.error("%s failed", server.name, exc_info=reason)
            return Failure(server.name, reason)
    return None


async def _stop_all(servers: Sequence[Server]) -> None:
    for server in reversed(servers):
        try:
            await server.stop()
        except Exception:  # the others must still stop
            log.exception("%s did not stop cleanly", server.name)
