"""`gw.supervision`: supervised tasks restart with back-off and keep a record of their
crashes, as `/tasks` and `gwctl check` show them."""

from __future__ import annotations

import asyncio

import pytest

from gw import supervision
from gw.supervision import Backoff, TaskBook, supervise


async def test_back_off_doubles_while_a_task_keeps_failing() -> None:
    book = TaskBook()
    runs: list[int] = []
    ended = asyncio.Event()

    async def failing() -> None:
        runs.append(1)
        if len(runs) == 4:  # the fourth run stays up
            ended.set()
            await asyncio.Event().wait()
        raise ValueError("bad input")

    backoff = Backoff(first=0.01, most=0.04, stable=60)
    task = asyncio.create_task(supervise("t", failing, book=book, backoff=backoff))
    await asyncio.wait_for(ended.wait(), timeout=10)
    health = book.tasks["t"]
    assert health.crashes == 3 and health.last_error == "ValueError: bad input"
    assert health.state == "running"
    assert [backoff.next(d, ran=1) for d in (0.01, 0.02, 0.04)] == [0.02, 0.04, 0.04]
    assert backoff.next(0.04, ran=60) == 0.01  # a task that ran a while starts over
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert health.state == "stopped"


async def test_a_task_that_ends_by_itself_is_a_crash_too() -> None:
    book = TaskBook()
    ran = asyncio.Event()

    async def quiet() -> None:
        if ran.is_set():
            await asyncio.Event().wait()
        ran.set()

    task = asyncio.create_task(supervise("quiet", quiet, book=book))
    await asyncio.wait_for(ran.wait(), timeout=10)
    await asyncio.sleep(0)
    (row,) = book.data()
    assert row["crashes"] == 1 and row["lastCrash"]["error"] == "RuntimeError: it ended by itself"
    assert row["state"] == "restarting" and not row["healthy"] and row["restartInSeconds"] >= 0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def test_a_crash_is_unhealthy_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    book = TaskBook()
    book.track("steady")
    book.failed("xds push", KeyError("listener"))
    now = book.tasks["xds push"].last_crash_at or 0.0
    assert [r["healthy"] for r in book.data()] == [True, False]
    (_, crashed) = book.data()
    assert crashed["state"] == "running" and crashed["lastCrash"]["error"] == "KeyError: 'listener'"
    later = now + supervision.RECENT_CRASH + 1
    assert book.tasks["xds push"].healthy(later)
    assert book.tasks["xds push"].data(later)["crashes"] == 1  # the count stays
