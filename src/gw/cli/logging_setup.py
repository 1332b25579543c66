"""Logging for gw processes: a file with everything at the chosen level, warnings on stderr."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: str, file: Path | None = None) -> None:
    root = logging.getLogger()
    root.handlers.clear()
    root.setLevel(level.upper())
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter(FORMAT))
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(file)
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
        stderr.setLevel(logging.WARNING)
    root.addHandler(stderr)
    for noisy in ("uvicorn", "uvicorn.error", "httpx", "watchfiles", "grpc"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
