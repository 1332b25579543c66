"""Small line charts as inline SVG, computed here so that the page needs no charting code:
a chart is a few polylines (`points="x,y x,y ..."`) over a shared vertical scale.

Only numbers reach the SVG: nothing a user wrote is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 160
HEIGHT = 36


@dataclass(frozen=True, slots=True)
class Line:
    #: The CSS class that colours it (`rps`, `e4xx`, `e5xx`, `p50`, `p99`).
    kind: str
    #: Runs of known values; a None in the data breaks the line.
    segments: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Chart:
    lines: tuple[Line, ...]
    #: The value at the top of the chart.
    top: float
    width: int = WIDTH
    height: int = HEIGHT


def chart(
    data: Sequence[tuple[str, Sequence[float | None]]], width: int = WIDTH, height: int = HEIGHT
) -> Chart:
    """One chart of several series (kind, values), oldest first; the newest value sits at
    the right edge, and each value takes the same width."""
    known = [v for _, values in data for v in values if v is not None]
    top = max(known, default=0.0) or 1.0
    count = max((len(values) for _, values in data), default=0)
    step = width / max(count - 1, 1)
    lines = []
    for kind, values in data:
        offset = count - len(values)
        segments: list[str] = []
        run: list[str] = []
        for i, value in enumerate(values):
            if value is None:
                if run:
                    segments.append(" ".join(run))
                run = []
                continue
            x = (offset + i) * step
            y = height - 1 - (value / top) * (height - 2)
            run.append(f"{x:.1f},{y:.1f}")
        if run:
            segments.append(" ".join(run))
        lines.append(Line(kind, tuple(s for s in segments if " " in s) or tuple(segments)))
    return Chart(lines=tuple(lines), top=top, width=width, height=height)
