"""Polling instead of sleeping: wait until a condition holds, or fail saying which."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Poll(Generic[T]):
    """One polling session: `check()` says whether to stop, raising at the deadline."""

    condition: Callable[[], T | None]
    timeout: float
    what: str
    value: T | None = None
    last_error: BaseException | None = None

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.timeout

    def check(self) -> bool:
        try:
            self.value = self.condition()
            if self.value:
                return True
        except Exception as exc:  # noqa: BLE001 (polling: anything may fail until ready)
            self.last_error = exc
        if time.monotonic() > self.deadline:
            detail = f": last error {self.last_error!r}" if self.last_error else ""
            raise TimeoutError(f"timed out after {self.timeout}s waiting for {self.what}{detail}")
        return False


def wait_until(
    condition: Callable[[], T | None],
    *,
    timeout: float = 15.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """Call `condition` until it returns something truthy; return that. Exceptions count as
    "not yet" until the deadline, then the last one is raised."""
    poll = _Poll(condition, timeout, what)
    while not poll.check():
        time.sleep(interval)
    assert poll.value
    return poll.value


async def eventually(
    condition: Callable[[], T | None],
    *,
    timeout: float = 10.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """`wait_until` for async tests: polls without blocking the event loop."""
    poll = _Poll(condition, timeout, what)
    while not poll.check():
        await asyncio.sleep(interval)
    assert poll.value
    return poll.value
