"""Sticky upstream hosts: a session remembers the upstream host that served it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class StatefulSession:
    """The upstream host is kept in a cookie (`cookie_name`, `cookie_path`, lifetime
    `cookie_ttl_ms`, 0: a session cookie) or a header (`header_name`); a request carrying
    it goes back to that host while it is healthy, or (with `strict`) fails with 503 when it
    is gone."""

    kind: Literal["cookie", "header"]
    cookie_name: str = ""
    cookie_path: str = ""
    cookie_ttl_ms: int = 0
    header_name: str = ""
    strict: bool = False
