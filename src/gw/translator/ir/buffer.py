"""Request buffering limits of virtual hosts, routes and weighted destinations."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class BufferLimit:
    """The whole request body is buffered up to `max_request_bytes` (413 beyond it), or
    buffering is switched off here (`disabled`)."""

    max_request_bytes: int | None = None
    disabled: bool = False
