"""Traces of control-plane work: one `Trace` per translation, one `Span` per stage.

A trace answers "where did the time go when I saved that file?": how long the store took to
read the folder, how long the control plane waited for a burst of writes to settle, then
discovery, translation and publishing (xDS cache + statuses). The debug server shows the
most recent traces (`/debug/traces`) and the metrics histograms are fed from them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Span:
    name: str
    #: Offset from the start of the trace, in seconds.
    start: float
    duration: float


@dataclass(slots=True)
class Trace:
    id: int
    #: Wall-clock time (Unix seconds) the trace started; spans are offsets from `origin`.
    started_at: float
    origin: float = field(default_factory=time.perf_counter)
    spans: list[Span] = field(default_factory=list)
    resources: int = 0
    status_changes: int = 0
    error: str | None = None

    def add(self, name: str, start: float, end: float) -> None:
        """Record a span from two `time.perf_counter()` readings."""
        self.spans.append(Span(name, start - self.origin, end - start))

    @contextlib.contextmanager
    def span(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, start, time.perf_counter())

    @property
    def duration(self) -> float:
        return max((s.start + s.duration for s in self.spans), default=0.0)

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "startedAt": self.started_at,
            "durationMs": _ms(self.duration),
            "resources": self.resources,
            "statusChanges": self.status_changes,
            "spans": [
                {"name": s.name, "startMs": _ms(s.start), "durationMs": _ms(s.duration)}
                for s in self.spans
            ],
        }
        if self.error is not None:
            data["error"] = self.error
        return data


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)
