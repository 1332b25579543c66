"""Polling instead of sleeping: wait until a condition holds, or fail saying which."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T | None],
    *,
    timeout: float = 15.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """Call `condition` until it returns something truthy; return that. Exceptions count as
    "not yet" until the deadline, then the last one is raised."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 (polling: anything may fail until ready)
            last_error = exc
        if time.monotonic() > deadline:
            detail = f": last error {last_error!r}" if last_error else ""
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}{detail}")
        time.sleep(interval)


async def eventually(
    condition: Callable[[], T | None],
    *,
    timeout: float = 10.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """`wait_until` for async tests: polls without blocking the event loop."""
    import asyncio

    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 (polling: anything may fail until ready)
            last_error = exc
        if time.monotonic() > deadline:
            detail = f": last error {last_error!r}" if last_error else ""
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}{detail}")
        await asyncio.sleep(interval)
