"""Keeping a process's long-running parts running: tasks and child processes that end by
themselves are logged, counted and started again after a back-off.

A long-running task (the folder watcher, the translation loop, leader election, discovery,
an xDS subscription) ends only when cancelled; anything else is a bug, or input nobody
foresaw. Left alone, such a task dies silently and the process goes on looking healthy
while it no longer follows its input. `supervise()` runs one: an exception (or a quiet
end) is logged with its traceback, recorded in `TASKS`, and the task starts again after
0.1 s, doubling to 30 s while it keeps failing (back to 0.1 s once it ran a minute).

`TASKS` is this process's record, as the debug server's `/tasks` serves it and
`gwctl check` reads it: a task that is waiting to restart, or crashed in the last
`RECENT_CRASH` seconds, is not healthy.

`ChildProcess` does the same for a program run as a child (Envoy; the extauth and
rate-limit servers under `gw up`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: A task that crashed this recently is reported (`gwctl check` fails) even though it runs
#: again: a crash is a bug, and one that repeats every few minutes must not look healthy.
RECENT_CRASH = 600.0


@dataclass(frozen=True, slots=True)
class Backoff:
    first: float
    most: float
    #: Running this long without failing starts the back-off over.
    stable: float

    def next(self, delay: float, ran: float) -> float:
        """The delay after this one; `ran` is how long the last run lasted."""
        return self.first if ran >= self.stable else min(delay * 2, self.most)


TASK_BACKOFF = Backoff(first=0.1, most=30.0, stable=60.0)


@dataclass(slots=True)
class TaskHealth:
    """One supervised task: whether it runs, how often it crashed, the last crash."""

    name: str
    state: str = "running"  # running | restarting | stopped
    crashes: int = 0
    last_error: str | None = None
    last_traceback: str | None = None
    last_crash_at: float | None = None
    restart_at: float | None = None

    def crashed(self, error: BaseException, restart_in: float | None) -> None:
        self.crashes += 1
        self.last_error = f"{type(error).__name__}: {error}".strip().removesuffix(":")
        self.last_traceback = "".join(traceback.format_exception(error))
        self.last_crash_at = time.time()
        if restart_in is not None:
            self.state = "restarting"
            self.restart_at = self.last_crash_at + restart_in

    def healthy(self, now: float) -> bool:
        recent = self.last_crash_at is not None and now - self.last_crash_at < RECENT_CRASH
        return self.state != "restarting" and not recent

    def data(self, now: float) -> dict[str, Any]:
        """As `/tasks` serves it."""
        out: dict[str, Any] = {
            "name": self.name,
            "state": self.state,
            "healthy": self.healthy(now),
            "crashes": self.crashes,
        }
        if self.last_crash_at is not None:
            out["lastCrash"] = {
                "error": self.last_error,
                "secondsAgo": round(now - self.last_crash_at, 1),
                "traceback": self.last_traceback,
            }
        if self.state == "restarting" and self.restart_at is not None:
            out["restartInSeconds"] = round(max(0.0, self.restart_at - now), 1)
        return out


@dataclass(slots=True)
class TaskBook:
    """Every supervised task of this process, by name."""

    tasks: dict[str, TaskHealth] = field(default_factory=dict)

    def track(self, name: str) -> TaskHealth:
        """The record of `name` (a task started again keeps its history)."""
        return self.tasks.setdefault(name, TaskHealth(name))

    def failed(self, name: str, error: BaseException) -> None:
        """A failure of a part that its peer starts again (an xDS stream: the proxy
        reconnects): counted and shown, the part is not restarted here."""
        self.track(name).crashed(error, restart_in=None)

    def data(self) -> list[dict[str, Any]]:
        now = time.time()
        return [self.tasks[name].data(now) for name in sorted(self.tasks)]


#: This process's supervised tasks.
TASKS = TaskBook()


async def supervise(
    name: str,
    run: Callable[[], Awaitable[None]],
    *,
    stopping: Callable[[], bool] = lambda: False,
    book: TaskBook = TASKS,
    backoff: Backoff = TASK_BACKOFF,
) -> None:
    """Run `run()` until cancelled (or until it ends while `stopping()` says so), starting
    it again after a back-off whenever it raises or ends by itself."""
    health = book.track(name)
    delay = backoff.first
    while True:
        started = time.monotonic()
        health.state = "running"
        try:
            await run()
            reason: BaseException = RuntimeError("it ended by itself")
        except asyncio.CancelledError:
            health.state = "stopped"
            raise
        except Exception as exc:  # whatever ends it: logged, recorded, restarted
            reason = exc
        if stopping():
            health.state = "stopped"
            return
        delay = backoff.next(delay, time.monotonic() - started) if health.crashes else delay
        log.error("%s crashed; restarting in %.1fs", name, delay, exc_info=reason)
        health.crashed(reason, delay)
        await asyncio.sleep(delay)


def _die_with_parent(parent: int) -> Callable[[], None]:
    """For the child, before exec: ask Linux to SIGTERM it when its parent dies, even by
    SIGKILL, so that no orphan keeps holding ports. A parent that died between fork and
    this request cannot signal anymore: then the child exits at once."""

    def in_child() -> None:
        if sys.platform.startswith("linux"):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
            if os.getppid() != parent:
                os._exit(1)

    return in_child


class ChildProcess:
    """A program kept running as a child: started again with back-off when it exits,
    stopped with SIGTERM (SIGKILL after a timeout). Its output goes to `log_path`."""

    BACKOFF = Backoff(first=0.5, most=10.0, stable=30.0)

    def __init__(
        self, name: str, log_path: Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.process: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self._stopping = False
        self._stop_event = asyncio.Event()

    def command(self) -> list[str]:
        raise NotImplementedError

    async def spawn(self) -> asyncio.subprocess.Process:
        """Start one instance (the back-off loop of `run()` waits for it)."""
        log_file = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log_file = open(self.log_path, "ab")  # noqa: SIM115 (closed below)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.command(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file or None,
                stderr=log_file or None,
                env=self.env,
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()),
            )
        finally:
            if log_file is not None:
                log_file.close()  # the child has its own copy
        log.info("%s started (pid %s)", self.name, self.process.pid)
        return self.process

    async def run(self) -> None:
        """Keep the program running until `stop()`."""
        delay = self.BACKOFF.first
        while not self._stopping:
            started = time.monotonic()
            process = self.process
            if process is None or process.returncode is not None:
                process = await self.spawn()
            code = await process.wait()
            if self._stopping:
                return
            lived = time.monotonic() - started
            delay = self.BACKOFF.next(delay, lived) if self.restarts else delay
            log.error(
                "%s exited with status %s after %.1fs; restarting in %.1fs",
                self.name,
                code,
                lived,
                delay,
            )
            self.restarts += 1
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop_event.wait(), delay)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds."""
        self._stopping = True
        self._stop_event.set()
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
