"""`DirectoryStore`: resources kept as manifest files in a folder (the embedded default).

The folder is read recursively; `.yaml`, `.yml` and `.json` files may hold several
documents. Hidden files and folders (editor swap files, `.git`) are skipped.

A file that fails to parse does not take its resources away: the resources it last held
are reported broken (the translator marks them `Rejected` and keeps serving their last
accepted configuration) until the file is fixed or deleted. The same holds for a file
beyond the limits of Settings `directoryConfigSource` (`manifests.py`), and for a file or
document that made reading fail in a way nobody foresaw: whatever a file holds, it is an
input error of that file, never a crash of the store.

`watch()` reads in a worker thread, so that the servers sharing the event loop keep
answering while a large folder is read; a scan of many megabytes also has its YAML parsed
in worker processes (`reading.py`). A program stopping during a read does not wait for it:
the scan stops at its next file (`ScanStopped`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import closing
from pathlib import Path

from gw import collector, defaults
from gw.api import (
    IgnoredDocument,
    ManifestError,
    Problem,
    ResourceKey,
    Settings,
    key_of,
    kind_for,
    parse_document,
)
from gw.snapshot import Snapshot
from gw.store.index import Document, FileState, FolderIndex
from gw.store.manifests import Limits
from gw.store.reading import FileJob, Loaded, load_files, reading_workers, unforeseen
from gw.store.status import StatusBook

log = logging.getLogger(__name__)

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")

#: The Settings object whose `directoryConfigSource` limits the files (in the gateway
#: namespace), as the translator reads it.
SETTINGS_NAME = "default"

#: How the folder watcher batches events (milliseconds): it hands over a batch once no new
#: event came for `WATCH_STEP_MS`, or after `WATCH_DEBOUNCE_MS` at the latest. Short, so
#: that a change is read at once; the control plane coalesces bursts itself. 1 ms instead
#: of 2 took about 2 ms off a change's propagation (`bench/propagation.py`) at the same idle
#: CPU of `gw up` (1.2 %).
WATCH_STEP_MS = 1
WATCH_DEBOUNCE_MS = 30

#: A stamp no file has: the file is read again at the next scan.
_UNREAD = (-1, -1, -1)


class ScanStopped(Exception):
    """A scan was told to stop before it finished (the program is stopping). The store's
    index is as it was before the scan began: the next scan reads those files again."""


class DirectoryStore:
    #: A file modified this recently that lost documents or stopped parsing may still be
    #: being written (tools that truncate, then write): look again before believing it.
    SETTLE_SECONDS = 0.05
    SETTLE_TRIES = 4

    def __init__(
        self, root: Path, namespace: str = defaults.NAMESPACE, *, read_workers: bool = False
    ) -> None:
        """`read_workers`: large scans may parse in worker processes (`reading.py`). Only
        for gw's own programs: a spawned worker imports the program's main module again,
        which a script without an `if __name__ == "__main__":` guard would run again."""
        if not root.is_dir():
            raise NotADirectoryError(f"{root} is not a folder of manifests")
        self.root = root
        self.read_workers = read_workers
        self._prefix = os.path.join(str(root), "")
        self.namespace = namespace
        self.statuses = StatusBook()
        #: What one file may cost, from Settings `directoryConfigSource` as last read.
        self.limits = Limits()
        #: How long the last `scan()` took (the control plane's traces show it).
        self.last_scan_seconds = 0.0
        self._index = FolderIndex(self._rel)
        #: Files and folders read, by absolute path (how the watcher names them).
        self._paths: dict[str, Path] = {}
        self._folders: dict[str, Path] = {}
        #: Files that just got worse (lost documents, stopped parsing): maybe half written.
        self._settling: set[Path] = set()
        self._scanning = threading.Lock()

    def scan(
        self, hint: Iterable[str] | None = None, *, stop: threading.Event | None = None
    ) -> Snapshot:
        """Re-read the files that changed since the last scan and build a snapshot.

        `hint`: the paths the folder watcher saw change. When they are all files of folders
        already read, only those are looked at; otherwise (and without a hint) the whole
        folder is walked, each file's modification time, size and inode telling whether it
        changed. When nothing changed, the previous snapshot object is returned as is, so
        that consumers can skip work with an identity check. Safe to call from any thread
        (one scan runs at a time). When the scan reads new limits from Settings, every file
        is read again under them at once.

        `stop`: once set, the scan raises `ScanStopped` at the next file it looks at (the
        read of a large folder takes seconds, and a stopping program must not wait for it).
        """
        with self._scanning, collector.paused():
            started = time.perf_counter()
            snapshot = self._scan_files(self._targets(hint), stop)
            limits = self._limits_in(snapshot)
            if limits != self.limits:
                log.info("reading the folder again under new limits: %s", limits)
                self.limits = limits
                for state in self._index.files.values():
                    state.stamp = _UNREAD
                snapshot = self._scan_files(None, stop)
            self.last_scan_seconds = time.perf_counter() - started
            return snapshot

    def _limits_in(self, snapshot: Snapshot) -> Limits:
        """The Settings' limits; the current ones while the Settings manifest is broken
        (like any rejected resource, it keeps its last accepted version); the defaults when
        there are no Settings."""
        key = ResourceKey(Settings.KIND, self.namespace, SETTINGS_NAME)
        settings = snapshot.resources.get(key)
        if isinstance(settings, Settings):
            return settings.spec.directory_config_source or Limits()
        if any(error.key == key for error in snapshot.errors):
            return self.limits
        return Limits()

    def _targets(self, hint: Iterable[str] | None) -> list[Path] | None:
        """The manifest files the watcher's paths name, or None when the whole folder must
        be walked (no hint; a folder appeared or went; a path outside what was read)."""
        if hint is None:
            return None
        out: list[Path] = []
        for raw in hint:
            absolute = os.path.abspath(raw)
            known = self._paths.get(absolute)
            if known is not None:
                out.append(known)
                continue
            folder = self._folders.get(os.path.dirname(absolute))
            if folder is None or absolute in self._folders or os.path.isdir(absolute):
                return None
            name = os.path.basename(absolute)
            if _is_manifest(name):
                out.append(folder / name)
        return out

    def _scan_files(self, targets: list[Path] | None, stop: threading.Event | None) -> Snapshot:
        """Look at `targets` (None: every file of the folder) and read those that changed.
        The folder's index takes what was read only at the end: after a scan that stopped
        midway (`stop`), the next one reads again every file that changed."""
        changed: list[tuple[Path, FileState | None]] = []
        now = time.time()
        settling, self._settling = self._settling, set()
        files = self._index.files
        paths = self._manifest_paths() if targets is None else iter(sorted(set(targets)))
        seen: set[Path] = set()
        #: The files to read: where their state goes in `changed`, and what they were.
        reads: list[tuple[int, Path, tuple[int, int, int], FileState | None, bool]] = []
        for path in paths:
            _check(stop)
            seen.add(path)
            try:
                st = path.stat()
            except OSError:
                try:
                    st = path.lstat()  # a symbolic link whose target is gone
                except OSError:
                    if targets is not None and path in files:
                        changed.append((path, None))  # removed
                    continue  # removed (between listing and stat)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
            known = files.get(path)
            recent = now - st.st_mtime < self.SETTLE_SECONDS * 2
            if known is not None and known.stamp == stamp:
                if path in settling and recent:
                    self._settling.add(path)  # still worse than before, still fresh
                continue
            unreadable = _unreadable(st.st_mode)
            if unreadable is None:
                reads.append((len(changed), path, stamp, known, recent))
                changed.append((path, None))  # its place, filled in once it is read
                continue
            state = FileState(
                stamp=stamp, error=unreadable, last_keys=known.last_keys if known else {}
            )
            log.warning("cannot read %s: %s", self._rel(path), unreadable)
            changed.append((path, state))
            self._read_as(path, known, state, recent)
        jobs = [FileJob(path, stamp[1], _digests(known)) for _, path, stamp, known, _ in reads]
        workers = reading_workers(jobs) if self.read_workers else 0
        # closed whatever happens here (an interrupt): its worker processes stop at once
        with closing(load_files(jobs, self.limits, workers)) as loads:
            for (at, path, stamp, known, recent), loaded in zip(reads, loads, strict=True):
                _check(stop)
                state = self._state(path, stamp, known, loaded)
                changed[at] = (path, state)
                self._read_as(path, known, state, recent)
        if targets is None:
            changed += [(gone, None) for gone in files.keys() - seen]
        for path, now_state in changed:
            if now_state is None:
                self._paths.pop(os.path.abspath(path), None)
        return self._index.update(changed)

    async def watch(self) -> AsyncIterator[Snapshot]:
        """Yield a snapshot now and after every batch of changes in the folder. Files are
        read in a worker thread: the event loop keeps serving meanwhile."""
        from watchfiles import awatch

        yield await self._scan_in_thread()
        async for changes in awatch(self.root, debounce=WATCH_DEBOUNCE_MS, step=WATCH_STEP_MS):
            snapshot = await self._scan_in_thread([path for _, path in changes])
            for _ in range(self.SETTLE_TRIES):
                if not self._settling:
                    break
                await asyncio.sleep(self.SETTLE_SECONDS)
                snapshot = await self._scan_in_thread()
            yield snapshot

    async def _scan_in_thread(self, hint: list[str] | None = None) -> Snapshot:
        """`scan(hint)` in a worker thread, stopped when the wait for it is cancelled: the
        event loop's close waits for its threads, and a Ctrl-C during the read of 100,000
        VirtualServices would otherwise wait for the whole read."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(self.scan, hint, stop=stop)
        except asyncio.CancelledError:
            stop.set()
            raise

    def _manifest_paths(self) -> Iterator[Path]:
        # Symbolic links to folders are followed, each folder once: a link back up the tree
        # would otherwise read the same files again at every level of the loop.
        visited: set[tuple[int, int]] = set()
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=True):
            try:
                st = os.stat(dirpath)
            except OSError:
                dirnames[:] = []
                continue  # removed while being listed
            if (st.st_dev, st.st_ino) in visited:
                log.warning(
                    "%s is a link to a folder already read: skipped", self._rel(Path(dirpath))
                )
                dirnames[:] = []
                continue
            visited.add((st.st_dev, st.st_ino))
            self._folders[os.path.abspath(dirpath)] = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if _is_manifest(name):
                    yield Path(dirpath) / name

    def _read_as(self, path: Path, known: FileState | None, state: FileState, recent: bool) -> None:
        """Remember that `path` was read (into `state`); watch it when it just got worse."""
        self._paths[os.path.abspath(path)] = path
        if recent and _got_worse(known, state):
            self._settling.add(path)

    def _state(
        self, path: Path, stamp: tuple[int, int, int], known: FileState | None, loaded: Loaded
    ) -> FileState:
        """What a file read (`loaded`) holds: its resources validated, or its error."""
        last_keys = dict(known.last_keys) if known else {}
        result = FileState(stamp=stamp, last_keys=last_keys)
        if loaded.error is not None:
            result.error = loaded.error
            if loaded.trace is not None:
                log.error("reading %s failed unexpectedly:\n%s", self._rel(path), loaded.trace)
            else:
                log.warning("cannot read %s: %s", self._rel(path), loaded.error)
            return result
        raw_documents = loaded.documents
        keys: dict[int, ResourceKey] = {}
        for raw in raw_documents:
            if raw.unchanged and known is not None:  # the same text: the same resources
                same = [d for d in known.documents if d.number == raw.number]
                result.documents += same
                for d in same:
                    meant = d.resource.key if d.resource is not None else None
                    meant = meant or (d.error.key if d.error is not None else None)
                    if meant is not None:
                        keys[d.number] = meant
                continue
            doc = _parse(raw.number, raw.data, raw.refusal)
            doc.digest = raw.digest
            if doc.resource is not None:
                keys[raw.number] = doc.resource.key
            elif doc.error is not None and doc.error.key is not None:
                keys[raw.number] = doc.error.key
            result.documents.append(doc)
        # Remember what each document meant; a nameless broken document keeps its old key.
        for number, key in last_keys.items():
            keys.setdefault(number, key)
        result.last_keys = keys
        return result

    def _rel(self, path: Path) -> str:
        """The path as messages name it: relative to the folder (string slicing: the index
        asks for every file's, and `Path.relative_to` costs as much as parsing it)."""
        text = str(path)
        return text[len(self._prefix) :] if text.startswith(self._prefix) else text


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise ScanStopped("the scan was stopped before it finished")


def _digests(known: FileState | None) -> dict[int, bytes]:
    """The fingerprints of a file's documents as last read (none after new limits, under
    which every document is looked at again)."""
    if known is None or known.stamp == _UNREAD or known.error is not None:
        return {}
    return {d.number: d.digest for d in known.documents if d.digest}


def _is_manifest(name: str) -> bool:
    """A file name the store reads: not hidden, not an editor's `#` file, a manifest suffix."""
    return not name.startswith((".", "#")) and name.endswith(MANIFEST_SUFFIXES)


def _parse(number: int, data: object, refusal: str | None) -> Document:
    """One document as a resource, an error (naming the resource when it can), or ignored."""
    doc = Document(number=number)
    try:
        if refusal is not None:
            raise ManifestError([Problem("", refusal)], _safe_key(data))
        doc.resource = parse_document(data)
    except IgnoredDocument:
        doc.ignored = True
    except ManifestError as exc:
        doc.error = exc
    except Exception as exc:  # a document must never stop the store, whatever it holds
        log.exception("parsing document %d failed unexpectedly", number)
        doc.error = ManifestError([Problem("", unforeseen(exc))], _safe_key(data))
    return doc


def _safe_key(data: object) -> ResourceKey | None:
    """The gw resource a document that could not be parsed meant, if it says. Other kinds
    (a `List`, a Deployment) are blamed on the file: they have no status."""
    try:
        key = key_of(data)
    except Exception:  # the same document broke the parser: name nothing
        return None
    return key if key is not None and kind_for(key.kind) is not None else None


def _unreadable(mode: int) -> str | None:
    """Why a manifest path that is not a regular file is not read, else None.

    Reading a FIFO would block the control plane until some process writes to it; a device
    may never end; a dangling symbolic link has nothing to read."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link whose target does not exist; fix or remove the link"
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    return f"not a regular file ({kind}); gw reads only regular files"


def _got_worse(before: FileState | None, after: FileState) -> bool:
    """True when a file stopped parsing or holds fewer resources than before."""
    if before is None:
        return after.error is not None
    if after.error is not None and before.error is None:
        return True
    return len(after.documents) < len(before.documents) or any(
        d.error is not None for d in after.documents
    )
