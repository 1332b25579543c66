"""Logging for gw processes: a file with everything at the chosen level, warnings on stderr;
and the level, changeable while running (the debug server's `PUT /logging`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

#: Libraries that log every request at info/debug: held at warning or above whatever the
#: level, so that `debug` shows gw's own detail rather than theirs.
NOISY_LOGGERS = ("uvicorn", "uvicorn.error", "httpx", "httpcore", "watchfiles", "grpc")

#: Level names accepted (lower case), as the established debug server spells them; `warn`
#: and `fatal` are aliases.
LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "fatal": logging.CRITICAL,
}


def configure_logging(level: str, file: Path | None = None) -> None:
    root = logging.getLogger()
    root.handlers.clear()
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter(FORMAT))
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(file)
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
        stderr.setLevel(logging.WARNING)
    root.addHandler(stderr)
    set_level(level)


def set_level(name: str) -> str:
    """Set the process's log level by name; returns the canonical name.

    Raises ValueError naming the accepted levels when `name` is not one of them.
    """
    number = LEVELS.get(name.strip().lower())
    if number is None:
        raise ValueError(
            f"unknown log level {name!r}; use one of debug, info, warn, error, critical"
        )
    logging.getLogger().setLevel(number)
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, number))
    return current_level()


def current_level() -> str:
    return logging.getLevelName(logging.getLogger().level).lower()
