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

`gw.children` does the same for programs run as child processes.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
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
