"""`Snapshot`: every resource a store holds at one moment, plus what it could not read.

The one data type every pipeline stage shares: stores produce it, discovery extends it,
the translator reads it.

A snapshot made from another (`derive`, `with_resources`) remembers which resources differ
from it and from a few of its ancestors (`Lineage`). That is only a hint: consumers that
keep state between snapshots (the translator's cache) use it to look at what changed
instead of comparing 100,000 resources, and fall back to comparing when the snapshot they
last saw is not among the ancestors. It never takes part in equality.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from gw.api import Resource, ResourceKey

R = TypeVar("R", bound=Resource)

#: Ancestors a snapshot remembers what changed since; and when the keys changed since one
#: are more than this share of all resources, comparing is as cheap and it is forgotten.
ANCESTORS = 8
FORGET_SHARE = 8


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


class Token:
    """A snapshot's identity for its descendants' lineage (never equal to another's)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Lineage:
    """This snapshot's `token`, and for some ancestors' tokens the keys whose resource
    (by identity) differs from that ancestor's."""

    token: Token = field(default_factory=Token)
    since: Mapping[Token, frozenset[ResourceKey]] = field(default_factory=dict)

    def changed_since(self, token: Token) -> frozenset[ResourceKey] | None:
        """The keys that differ from the snapshot with `token`: none when it is this one,
        None when it is not a remembered ancestor."""
        if token is self.token:
            return frozenset()
        return self.since.get(token)

    def child(self, changed: frozenset[ResourceKey], size: int) -> Lineage:
        """The lineage of a snapshot made from this one with `changed` keys changed."""
        limit = max(64, size // FORGET_SHARE)
        since = {self.token: changed}
        for token, keys in list(self.since.items())[: ANCESTORS - 1]:
            merged = keys | changed
            if len(merged) <= limit:
                since[token] = merged
        return Lineage(since=since)


@dataclass(frozen=True, slots=True)
class Snapshot:
    resources: Mapping[ResourceKey, Resource] = field(default_factory=dict)
    sources: Mapping[ResourceKey, Source] = field(default_factory=dict)
    errors: tuple[InputError, ...] = ()
    lineage: Lineage = field(default_factory=Lineage, compare=False, repr=False)
    #: Resource keys by kind, sorted, built on the first `of_kind` call (or carried over
    #: from the snapshot this one was derived from): translation asks for each kind several
    #: times, and sorting 100,000 resources per ask adds up.
    _by_kind: dict[str, list[ResourceKey]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def of_kind(self, kind: type[R]) -> list[R]:
        """Resources of one kind, sorted by namespace then name (a stable order)."""
        keys = self.keys_of_kind(kind.KIND)
        resources = self.resources
        return [resources[k] for k in keys]  # type: ignore[misc]

    def keys_of_kind(self, kind: str) -> list[ResourceKey]:
        """The keys of one kind, sorted (the list is shared: do not change it)."""
        if not self._by_kind and self.resources:
            for key in self.resources:
                self._by_kind.setdefault(key.kind, []).append(key)
            for found in self._by_kind.values():
                found.sort()
        return self._by_kind.get(kind, [])

    def kinds(self) -> list[str]:
        """The kinds of resources present."""
        self.keys_of_kind("")
        return list(self._by_kind)

    def sorted_keys(self, extra: Iterable[ResourceKey] = ()) -> list[ResourceKey]:
        """Every key, and the `extra` keys it does not hold, sorted: what `sorted()` of them
        all gives, made from the index by kind (sorting 100,000 keys took 0.1 s)."""
        keys = [k for kind in sorted(self.kinds()) for k in self.keys_of_kind(kind)]
        resources = self.resources
        more = sorted({k for k in extra if k not in resources})
        return list(heapq.merge(keys, more)) if more else keys

    def get(self, kind: type[R], namespace: str, name: str) -> R | None:
        found = self.resources.get(ResourceKey(kind.KIND, namespace, name))
        return found if isinstance(found, kind) else None

    def __iter__(self) -> Iterator[Resource]:
        return iter(self.resources.values())

    def derive(
        self,
        resources: Mapping[ResourceKey, Resource],
        changed: Iterable[ResourceKey],
        *,
        sources: Mapping[ResourceKey, Source] | None = None,
        errors: tuple[InputError, ...] | None = None,
    ) -> Snapshot:
        """A snapshot of `resources`, which differ from this one's in the `changed` keys
        only (the caller's word: resources under other keys must be the very same
        objects). Sources and errors are this one's unless given."""
        changed = frozenset(changed)
        out = Snapshot(
            resources=resources,
            sources=self.sources if sources is None else sources,
            errors=self.errors if errors is None else errors,
            lineage=self.lineage.child(changed, len(resources)),
        )
        if self._by_kind:
            out._by_kind.update(_reindexed(self._by_kind, changed, self.resources, resources))
        return out

    def with_resources(self, extra: Mapping[ResourceKey, Resource]) -> Snapshot:
        """A copy with more resources (discovery adds the upstreams it finds)."""
        merged = dict(self.resources)
        merged.update(extra)
        changed = [k for k, r in extra.items() if self.resources.get(k) is not r]
        return self.derive(merged, changed)


def _reindexed(
    by_kind: dict[str, list[ResourceKey]],
    changed: frozenset[ResourceKey],
    before: Mapping[ResourceKey, Resource],
    after: Mapping[ResourceKey, Resource],
) -> dict[str, list[ResourceKey]]:
    """The sorted keys by kind after `changed`: untouched kinds share their list."""
    out = dict(by_kind)
    copied: set[str] = set()
    for key in changed:
        was, now = key in before, key in after
        if was == now:
            continue
        kind = key.kind
        if kind not in copied:
            out[kind] = list(out.get(kind, ()))
            copied.add(kind)
        keys = out[kind]
        at = bisect.bisect_left(keys, key)
        if now:
            keys.insert(at, key)
        elif at < len(keys) and keys[at] == key:
            del keys[at]
    return {k: v for k, v in out.items() if v}
