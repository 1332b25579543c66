"""Fixed-window rate limits in e2e tests: a request sequence that happens to straddle the
end of a window (its counters start afresh) is run again."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def in_one_window(check: Callable[[], T], seconds: int = 3600) -> T:
    """Run `check` again if a window of `seconds` turned while it ran."""
    for _ in range(2):
        window = int(time.time()) // seconds
        result = check()
        if int(time.time()) // seconds == window:
            return result
    raise AssertionError("the window turned twice")
