"""`Snapshot`: every resource a store holds at one moment, plus what it could not read.

The one data type every pipeline stage shares: stores produce it, discovery extends it,
the translator reads it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from gw.api import Resource, ResourceKey

R = TypeVar("R", bound=Resource)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a resource came from: a file and a 1-based document number in it (0 when the
    whole file is meant)."""

    path: str
    document: int

    def __str__(self) -> str:
        return f"{self.path}, document {self.document}" if self.document else self.path


@dataclass(frozen=True, slots=True)
class InputError:
    """A manifest that could not be accepted.

    `key` names the resource the manifest meant, when that can be told (a document with a
    bad field, or a file that no longer parses but last held that resource). Such a resource
    is reported `Rejected` and its last accepted configuration keeps serving.
    """

    source: Source | None
    message: str
    key: ResourceKey | None = None

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        return f"{where}{self.message}"


@dataclass(frozen=True, slots=True)
class Snapshot:
    resources: Mapping[ResourceKey, Resource] = field(default_factory=dict)
    sources: Mapping[ResourceKey, Source] = field(default_factory=dict)
    errors: tuple[InputError, ...] = ()
    #: Resources by kind, sorted, built on the first `of_kind` call: translation asks for
    #: each kind several times, and one pass over 10,000 resources per ask adds up.
    _by_kind: dict[str, list[Resource]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def of_kind(self, kind: type[R]) -> list[R]:
        """Resources of one kind, sorted by namespace then name (a stable order)."""
        if not self._by_kind and self.resources:
            for key, resource in self.resources.items():
                self._by_kind.setdefault(key.kind, []).append(resource)
            for found in self._by_kind.values():
                found.sort(key=lambda r: (r.metadata.namespace, r.metadata.name))
        return list(self._by_kind.get(kind.KIND, ()))  # type: ignore[arg-type]

    def get(self, kind: type[R], namespace: str, name: str) -> R | None:
        found = self.resources.get(ResourceKey(kind.KIND, namespace, name))
        return found if isinstance(found, kind) else None

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.resources.values())

    def with_resources(self, extra: Mapping[ResourceKey, Resource]) -> Snapshot:
        """A copy with more resources (discovery adds the upstreams it finds)."""
        merged = dict(self.resources)
        merged.update(extra)
        return Snapshot(resources=merged, sources=self.sources, errors=self.errors)
