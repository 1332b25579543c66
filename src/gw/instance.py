"""Instances: every `gw up` on a machine keeps its state in a directory of its own.

`$GW_HOME/instances/<name>/` (`GW_HOME` defaults to `~/.gw`) holds the state file `up.json`
(where the proxy, the admin server and the logs are, for `gwctl`), the Envoy bootstrap
(`proxy/`) and the logs of the current run (`logs/`; the previous run's are moved to
`logs/previous/` when a run starts, so logs never grow across runs). The name is the served
folder's name and a hash of its absolute path (`quickstart-1a2b3c4d`), or the one given with
`gw up --instance NAME`: two `gw up` serving different folders never share a file.

A running instance holds an exclusive lock on `instance.lock` for its whole life. The lock,
not the state file, says whether an instance runs: it goes away with the process however the
process ends, so a crashed `gw up` never blocks the next one or misleads `gwctl`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

INSTANCES = "instances"
STATE_FILE = "up.json"
LOCK_FILE = "instance.lock"
LOGS = "logs"
PREVIOUS_LOGS = "previous"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


class InstanceError(Exception):
    """An instance cannot be started or found; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Instance:
    name: str
    directory: Path

    @property
    def state_file(self) -> Path:
        return self.directory / STATE_FILE

    @property
    def logs(self) -> Path:
        return self.directory / LOGS

    def state(self) -> dict[str, Any] | None:
        """The state file's content; None when there is none (not started, or stopped)."""
        try:
            data = json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return None
        except json.JSONDecodeError as exc:
            raise InstanceError(
                f"{self.state_file} is not valid JSON ({exc}); delete it and start `gw up` again"
            ) from None
        return data if isinstance(data, dict) else None

    def running(self) -> bool:
        """True while a `gw up` holds this instance's lock."""
        try:
            fd = os.open(self.directory / LOCK_FILE, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False


def default_name(folder: Path) -> str:
    """`<folder name>-<8 hex digits of its absolute path>`: stable for a folder, distinct for
    two folders of the same name."""
    resolved = folder.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", resolved.name).strip("-.") or "root"
    return f"{base[:40]}-{digest}"


def instance(home: Path, name: str) -> Instance:
    if not _NAME.fullmatch(name):
        raise InstanceError(
            f"{name!r} is not a valid instance name: use letters, digits, '.', '_' and '-' "
            "(at most 63, starting with a letter or digit)"
        )
    return Instance(name, home / INSTANCES / name)


class Claim:
    """The lock of a running instance: held until `release()` or the process ends."""

    def __init__(self, instance: Instance, lock: IO[bytes]) -> None:
        self.instance = instance
        self._lock = lock

    def release(self) -> None:
        self._lock.close()


def claim(home: Path, folder: Path, name: str | None = None) -> Claim:
    """Take the instance for `folder` (or `name`) for this process, and start its logs afresh.

    Raises `InstanceError` when another `gw up` runs as that instance."""
    chosen = instance(home, name or default_name(folder))
    chosen.directory.mkdir(parents=True, exist_ok=True)
    lock = open(chosen.directory / LOCK_FILE, "ab")  # noqa: SIM115 (held for the process's life)
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        state = chosen.state() or {}
        serving = f" serving {state['folder']}" if state.get("folder") else ""
        raise InstanceError(
            f"gw up instance {chosen.name!r} is already running{serving} (pid "
            f"{state.get('pid', '?')}); stop it first, or run this one under another name "
            "with --instance NAME"
        ) from None
    chosen.state_file.unlink(missing_ok=True)  # a crashed run's: it describes nothing now
    _start_logs(chosen.logs)
    return Claim(chosen, lock)


def _start_logs(logs: Path) -> None:
    """Move the last run's logs to `logs/previous/` (dropping the run before it)."""
    previous = logs / PREVIOUS_LOGS
    current = sorted(logs.glob("*.log")) if logs.is_dir() else []
    if not current:
        return
    shutil.rmtree(previous, ignore_errors=True)
    previous.mkdir(parents=True)
    for log in current:
        log.replace(previous / log.name)


def running_instances(home: Path) -> list[tuple[Instance, dict[str, Any]]]:
    """The instances running now with their state, by name; those still starting (no state
    file yet) are left out."""
    root = home / INSTANCES
    found = []
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        candidate = Instance(directory.name, directory)
        if not candidate.running():
            continue
        try:
            state = candidate.state()
        except InstanceError:
            continue
        if state is not None:
            found.append((candidate, state))
    return found


def select(home: Path, name: str | None, cwd: Path) -> tuple[Instance, dict[str, Any]] | None:
    """The instance gwctl works on: the one named, else the one serving the current folder
    (or a folder it is in), else the only one running. None when none runs.

    Raises `InstanceError` when the named one does not run, or several run and none serves
    the current folder."""
    if name is not None:
        chosen = instance(home, name)
        state = chosen.state() if chosen.running() else None
        if state is None:
            raise InstanceError(f"gw up instance {name!r} is not running{_listing(home)}")
        return chosen, state
    running = running_instances(home)
    here = cwd.resolve()
    serving_here = [
        (i, s)
        for i, s in running
        if s.get("folder") and (here == Path(s["folder"]) or Path(s["folder"]) in here.parents)
    ]
    if serving_here:
        # The innermost folder wins when folders nest.
        return max(serving_here, key=lambda found: len(str(found[1]["folder"])))
    if len(running) == 1:
        return running[0]
    if not running:
        return None
    raise InstanceError(
        f"{len(running)} gw up instances are running and none serves {here}: choose one "
        f"with --instance NAME (or GW_INSTANCE){_listing(home)}"
    )


def _listing(home: Path) -> str:
    running = running_instances(home)
    if not running:
        return "; no instance is running"
    names = ", ".join(f"{i.name} ({s.get('folder', '?')})" for i, s in running)
    return f"; running: {names}"
