"""`gw.lifecycle.serve()`: start in order, run until a signal or the first failure, stop in
reverse order past a server that fails to stop; and `AsgiServer`, a real uvicorn server, as
one of them. The recording servers below are the lifecycle's own contract, not stand-ins
for anything external."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from gw import lifecycle, supervision
from gw.asgi import AsgiServer, quiet_config
from tests.support.ports import free_port


class Recorder:
    """A server that notes what happens to it in `events`."""

    def __init__(
        self,
        name: str,
        events: list[str],
        *,
        start_error: Exception | None = None,
        stop_error: Exception | None = None,
    ) -> None:
        self.name = name
        self.events = events
        self.start_error = start_error
        self.stop_error = stop_error
        self.ended = asyncio.Event()
        self.end_error: Exception | None = None

    async def start(self) -> None:
        self.events.append(f"start {self.name}")
        if self.start_error is not None:
            raise self.start_error

    async def wait(self) -> None:
        await self.ended.wait()
        if self.end_error is not None:
            raise self.end_error

    async def stop(self) -> None:
        self.events.append(f"stop {self.name}")
        if self.stop_error is not None:
            raise self.stop_error

    def crash(self, error: Exception) -> None:
        self.end_error = error
        self.ended.set()


async def test_a_signal_stops_every_server_in_reverse_order() -> None:
    events: list[str] = []
    servers = [Recorder(name, events) for name in ("xds", "admin", "envoy")]

    def started() -> None:
        events.append("started")
        os.kill(os.getpid(), signal.SIGTERM)

    await asyncio.wait_for(
        lifecycle.serve(servers, on_started=started, on_stopping=lambda: events.append("stopping")),
        timeout=10,
    )
    assert events == [
        "start xds",
        "start admin",
        "start envoy",
        "started",
        "stopping",
        "stop envoy",
        "stop admin",
        "stop xds",
    ]


async def test_a_server_that_fails_stops_the_others_and_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events: list[str] = []
    servers = [Recorder(name, events) for name in ("xds", "controlplane", "envoy")]
    servers[1].crash(RecursionError("maximum recursion depth exceeded"))
    with pytest.raises(lifecycle.Failure) as failure:
        await asyncio.wait_for(lifecycle.serve(servers), timeout=10)
    assert str(failure.value) == "controlplane failed: maximum recursion depth exceeded"
    assert isinstance(failure.value.reason, RecursionError)
    assert events[-3:] == ["stop envoy", "stop controlplane", "stop xds"]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [
        "controlplane failed"
    ]


async def test_a_server_that_ends_quietly_is_a_failure_too() -> None:
    events: list[str] = []
    servers = [Recorder(name, events) for name in ("xds", "envoy")]
    servers[1].ended.set()
    with pytest.raises(lifecycle.Failure, match="envoy failed: it stopped on its own"):
        await asyncio.wait_for(lifecycle.serve(servers), timeout=10)


async def test_a_server_that_cannot_start_stops_those_started_before() -> None:
    events: list[str] = []
    servers = [
        Recorder("xds", events),
        Recorder("admin", events, start_error=OSError("address already in use")),
        Recorder("envoy", events),
    ]
    with pytest.raises(lifecycle.Failure, match="admin failed: address already in use"):
        await asyncio.wait_for(lifecycle.serve(servers), timeout=10)
    assert events == ["start xds", "start admin", "stop xds"]


async def test_a_server_that_fails_to_stop_does_not_keep_the_others_running(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events: list[str] = []
    servers = [
        Recorder("xds", events),
        Recorder("admin", events, stop_error=RuntimeError("stuck")),
        Recorder("envoy", events),
    ]
    servers[2].crash(RuntimeError("envoy exited"))
    with pytest.raises(lifecycle.Failure, match="envoy failed"):
        await asyncio.wait_for(lifecycle.serve(servers), timeout=10)
    assert events[-3:] == ["stop envoy", "stop admin", "stop xds"]
    assert "admin did not stop cleanly" in [r.getMessage() for r in caplog.records]


async def test_a_task_server_that_crashes_is_restarted_not_ended(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A crash of a task (the folder watcher meeting a file nobody foresaw) is logged and
    recorded, and the task runs again: the process keeps following its input."""
    runs: list[int] = []
    again = asyncio.Event()

    async def watcher() -> None:
        runs.append(len(runs))
        if len(runs) == 1:
            raise RecursionError("maximum recursion depth exceeded")
        again.set()
        await asyncio.Event().wait()

    server = lifecycle.TaskServer("test watcher", watcher)
    await server.start()
    await asyncio.wait_for(again.wait(), timeout=10)
    waiting = asyncio.create_task(server.wait())
    await asyncio.sleep(0)
    assert not waiting.done()  # it did not end: it restarted
    health = supervision.TASKS.tasks["test watcher"]
    assert (health.state, health.crashes) == ("running", 1)
    assert health.last_error == "RecursionError: maximum recursion depth exceeded"
    assert "RecursionError" in (health.last_traceback or "")
    (record,) = [r for r in caplog.records if r.getMessage().startswith("test watcher crashed")]
    assert record.exc_info is not None and record.exc_info[0] is RecursionError
    await server.stop()
    assert health.state == "stopped"
    waiting.cancel()


async def test_a_signal_during_a_slow_start_stops_at_once() -> None:
    """The control plane's start waits for its first translation; Ctrl-C must not."""
    events: list[str] = []
    never = asyncio.Event()
    slow = lifecycle.TaskServer("slow", never.wait, ready=never.wait)
    servers = [Recorder("xds", events), slow, Recorder("envoy", events)]
    asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(lifecycle.serve(servers), timeout=10)
    assert events == ["start xds", "stop xds"]


def _hello() -> Starlette:
    async def hello(_: object) -> PlainTextResponse:
        return PlainTextResponse("hello")

    return Starlette(routes=[Route("/", hello)])


async def test_an_asgi_server_serves_once_started_and_stops() -> None:
    port = free_port()
    server = AsgiServer("hello", quiet_config(_hello(), "127.0.0.1", port))
    await server.start()
    async with httpx.AsyncClient() as client:
        response = await client.get(f"http://127.0.0.1:{port}/")
    assert (response.status_code, response.text) == (200, "hello")
    await server.stop()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


async def test_an_asgi_server_on_a_taken_port_fails_to_start() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = AsgiServer("admin", quiet_config(_hello(), "127.0.0.1", port))
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
            await server.start()
