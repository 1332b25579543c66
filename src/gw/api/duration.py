"""Durations as the manifests write them: `200ms`, `1s`, `1.5s`, `5m`, `1h`, `250us`."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(us|µs|ms|s|m|h)$")
_UNIT_MS = {"us": 0.001, "µs": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def duration_ms(text: str) -> float:
    """Milliseconds in a duration string. Raises ValueError on anything else."""
    match = _DURATION.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a duration; write it like 200ms, 1s or 5m")
    return float(match.group(1)) * _UNIT_MS[match.group(2)]


def _check(text: str) -> str:
    duration_ms(text)
    return text


Duration = Annotated[str, AfterValidator(_check)]


def optional_ms(text: str | None) -> int | None:
    """Whole milliseconds in a duration, or None when it is not set."""
    return None if text is None else int(duration_ms(text))
