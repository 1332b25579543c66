"""Pausing Python's cyclic garbage collector while large acyclic structures are built.

Reading 100,000 manifests or translating them allocates millions of container objects that
all live on; every collection the allocations trigger walks the whole growing heap again
(a third of a 30,000-manifest read, a quarter of a translation). Neither leaves cyclic
garbage behind (checked with `gc.DEBUG_SAVEALL`), so the collector is paused for the
duration and resumes after.

The pause is counted: the store's reading thread and the translation thread may pause it
at once, and it resumes when the last of them is done (and only if it was running when the
first one paused it).

Resuming alone would not be enough: the millions of objects made meanwhile are all in the
youngest generation, and the first allocation after would scan every one of them (3 s
after reading 100,000 manifests). A process that collects its long-lived objects on its own
schedule (the control plane: a full collection when idle, `freezing(True)`) has the
collector freeze them instead as it resumes, as it would after publishing anyway.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pausers = 0
_resume = False
_freeze = False


def freezing(on: bool) -> None:
    """Whether the end of the last pause freezes every object (`gc.freeze`)."""
    global _freeze
    _freeze = on


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the `with` block."""
    global _pausers, _resume
    with _lock:
        if _pausers == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _resume:
                if _freeze:
                    gc.freeze()
                gc.enable()
