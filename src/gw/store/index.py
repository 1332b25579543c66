"""`FolderIndex`: the resources of a folder's files, kept up to date file by file.

Reading one changed file out of 1,000 must not cost a pass over the 100,000 resources of
the other 999: the index keeps, for every key, the files (and documents) that define it,
and for every file its own errors. A change re-decides only the keys the changed files
define(d) and the errors of the files that define those keys, and hands the next snapshot
over as derived from the last one (`Snapshot.derive`), naming the keys that changed.

What it decides is what reading every file in path order decides: the first definition
of a key (by path, then document) wins, every later one is an input error naming the
first; a file that does not parse keeps naming the resources it last held.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gw.api import ManifestError, Resource, ResourceKey
from gw.snapshot import InputError, Snapshot, Source


@dataclass(slots=True)
class Document:
    """One document of a file, parsed or not."""

    number: int
    resource: Resource | None = None
    error: ManifestError | None = None
    ignored: bool = False
    #: The fingerprint of the document's text (YAML), to tell it unchanged next time.
    digest: bytes = b""


@dataclass(slots=True)
class FileState:
    stamp: tuple[int, int, int]
    documents: list[Document] = field(default_factory=list)
    error: str | None = None
    # Keys this file held when it last parsed, by document number: what a broken file or
    # a nameless broken document is taken to mean.
    last_keys: dict[int, ResourceKey] = field(default_factory=dict)

    def defined(self) -> list[tuple[int, Resource]]:
        """(document number, resource) of each resource the file defines now."""
        if self.error is not None:
            return []
        return [(d.number, d.resource) for d in self.documents if d.resource is not None]


#: Where a definition is: (file, document number): sorts as reading the folder does.
Place = tuple[Path, int]


class FolderIndex:
    def __init__(self, relative: Callable[[Path], str]) -> None:
        self._relative = relative
        self._names: dict[Path, str] = {}
        self.files: dict[Path, FileState] = {}
        self._places: dict[ResourceKey, list[Place]] = {}
        self._defined: dict[Place, Resource] = {}
        self._resources: dict[ResourceKey, Resource] = {}
        self._sources: dict[ResourceKey, Source] = {}
        self._errors: dict[Path, tuple[InputError, ...]] = {}
        self._snapshot: Snapshot | None = None

    def update(self, changed: Iterable[tuple[Path, FileState | None]]) -> Snapshot:
        """The snapshot once each changed file holds its new state (None: the file is
        gone); the last snapshot itself when nothing changed."""
        touched: set[ResourceKey] = set()
        files: set[Path] = set()
        for path, state in changed:
            old = self.files.pop(path, None)
            for number, resource in old.defined() if old is not None else ():
                self._places[resource.key].remove((path, number))
                del self._defined[(path, number)]
                touched.add(resource.key)
            if state is not None:
                self.files[path] = state
                for number, resource in state.defined():
                    place = (path, number)
                    bisect.insort(self._places.setdefault(resource.key, []), place)
                    self._defined[place] = resource
                    touched.add(resource.key)
            else:
                self._names.pop(path, None)
            files.add(path)
        if not files and self._snapshot is not None:
            return self._snapshot
        changed_keys = self._decide(touched)
        for key in touched:
            files.update(p for p, _ in self._places.get(key, ()))
        for path in files:
            self._errors.pop(path, None)
            state = self.files.get(path)
            if state is not None:
                errors = tuple(self._file_errors(path, state))
                if errors:
                    self._errors[path] = errors
        errors = tuple(e for path in sorted(self._errors) for e in self._errors[path])
        resources, sources = dict(self._resources), dict(self._sources)
        if self._snapshot is None:
            self._snapshot = Snapshot(resources=resources, sources=sources, errors=errors)
        else:
            self._snapshot = self._snapshot.derive(
                resources, changed_keys, sources=sources, errors=errors
            )
        return self._snapshot

    def _decide(self, keys: set[ResourceKey]) -> list[ResourceKey]:
        """Each key's first definition wins; the keys whose resource changed."""
        changed = []
        for key in keys:
            places = self._places.get(key)
            if not places:
                self._places.pop(key, None)
                if self._resources.pop(key, None) is not None:
                    del self._sources[key]
                    changed.append(key)
                continue
            path, number = places[0]
            resource = self._defined[(path, number)]
            if self._resources.get(key) is not resource:
                changed.append(key)
            self._resources[key] = resource
            self._sources[key] = Source(self._name(path), number)
        return changed

    def _name(self, path: Path) -> str:
        """The file's name in messages, made once per file (a file holds many resources)."""
        name = self._names.get(path)
        if name is None:
            name = self._names[path] = self._relative(path)
        return name

    def _file_errors(self, path: Path, state: FileState) -> Iterable[InputError]:
        rel = self._name(path)
        if state.error is not None:
            if not state.last_keys:
                yield InputError(Source(rel, 0), state.error)
                return
            for number, key in sorted(state.last_keys.items()):
                message = f"the file no longer parses: {state.error}"
                yield InputError(Source(rel, number), message, key)
            return
        present = {d.resource.key for d in state.documents if d.resource is not None}
        for doc in state.documents:
            source = Source(rel, doc.number)
            if doc.resource is not None:
                key = doc.resource.key
                first = self._places[key][0]
                if first != (path, doc.number):
                    yield InputError(
                        source,
                        f"{key} is also defined in {self._sources[key]}; this copy is ignored",
                        key,
                    )
            elif doc.error is not None:
                meant = doc.error.key or state.last_keys.get(doc.number)
                if meant in present:
                    meant = None
                message = doc.error.describe() if meant is None else doc.error.details()
                yield InputError(source, message, meant)
