"""Profiling a running control plane without restarting it: where the CPU goes, what the
event loop is waiting on, and what holds memory.

- `cpu_sample(seconds)`: samples every other thread's stack at a fixed interval (the
  event loop runs on the main thread; translations run in worker threads) and counts
  identical stacks. `folded` is the collapsed-stack text flame-graph tools read
  (`thread;outer;...;inner count` per line).
- `tasks()`: every asyncio task with the stack it is suspended in.
- `threads()`: every thread's current stack.
- `heap()`: object counts by type (from the garbage collector), and, while allocation
  tracing is on (`set_heap_tracing(True)`: it slows the process down), the source lines
  that allocated the most memory still held.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
import traceback
import tracemalloc
from collections import Counter
from types import FrameType
from typing import Any

MAX_SECONDS = 60.0
TOP = 25


def cpu_sample(seconds: float, interval: float = 0.005) -> dict[str, Any]:
    """Sample the stacks of all other threads for `seconds`; blocking (run it in a thread)."""
    me = threading.get_ident()
    names = {t.ident: t.name for t in threading.enumerate()}
    stacks: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            functions = _functions(frame)
            thread = names.get(ident) or f"thread-{ident}"
            stacks[";".join([thread, *functions])] += 1
            if functions:
                own[functions[-1]] += 1
            for function in set(functions):
                total[function] += 1
        samples += 1
        time.sleep(interval)
    return {
        "seconds": seconds,
        "intervalMs": interval * 1000,
        "samples": samples,
        "top": [
            {"function": f, "self": own[f], "total": total[f]} for f, _ in total.most_common(TOP)
        ],
        "folded": "".join(f"{stack} {count}\n" for stack, count in stacks.most_common()),
    }


def _functions(frame: FrameType | None) -> list[str]:
    """Outermost first: `module:function:line`."""
    out: list[str] = []
    while frame is not None:
        code = frame.f_code
        module = frame.f_globals.get("__name__", code.co_filename)
        out.append(f"{module}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    out.reverse()
    return out


def tasks() -> list[dict[str, Any]]:
    """Every asyncio task of the running loop (call it on the loop)."""
    out = []
    for task in sorted(asyncio.all_tasks(), key=lambda t: t.get_name()):
        coro = task.get_coro()
        out.append(
            {
                "name": task.get_name(),
                "coroutine": getattr(coro, "__qualname__", repr(coro)),
                "done": task.done(),
                "stack": [
                    line.rstrip()
                    for frame in task.get_stack()
                    for line in traceback.format_stack(frame, limit=1)
                ],
            }
        )
    return out


def threads() -> list[dict[str, Any]]:
    frames = sys._current_frames()
    out = []
    for thread in sorted(threading.enumerate(), key=lambda t: t.name):
        frame = frames.get(thread.ident or -1)
        out.append(
            {
                "name": thread.name,
                "daemon": thread.daemon,
                "stack": [line.rstrip() for line in traceback.format_stack(frame)] if frame else [],
            }
        )
    return out


def heap() -> dict[str, Any]:
    counts: Counter[str] = Counter(type(o).__qualname__ for o in gc.get_objects())
    data: dict[str, Any] = {
        "tracing": tracemalloc.is_tracing(),
        "gcCounts": list(gc.get_count()),
        "objects": [{"type": t, "count": n} for t, n in counts.most_common(TOP)],
    }
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        stats = tracemalloc.take_snapshot().statistics("lineno")
        data["tracedBytes"] = current
        data["peakTracedBytes"] = peak
        data["top"] = [
            {"where": str(s.traceback), "bytes": s.size, "count": s.count} for s in stats[:TOP]
        ]
    return data


def set_heap_tracing(on: bool) -> bool:
    """Start or stop allocation tracing; returns whether it is on."""
    if on and not tracemalloc.is_tracing():
        tracemalloc.start()
    elif not on and tracemalloc.is_tracing():
        tracemalloc.stop()
    return tracemalloc.is_tracing()
