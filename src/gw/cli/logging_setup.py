"""Kept for imports of the first release: logging setup lives in `gw.logs`."""

from __future__ import annotations

from gw.logs import configure_logging

__all__ = ["configure_logging"]
