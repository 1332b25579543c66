"""`Tallies`: what every resource of a kind says about one question, kept per resource.

A global pass sometimes needs one fact drawn from every VirtualService: which named extauth
servers their `customAuth` options call, say. Drawing it again from 100,000 VirtualServices
on each edit was half of an edit's translation at that size. A `Tally` keeps what was drawn
from each resource (only the resources that gave something) and how many resources gave
each value; the next translation moves it on by the keys that changed since, so an edit
redraws the changed resources only.

A tally answers exactly what drawing from every resource would (the property test of
incremental translation compares both); it is kept in the translation cache, an explicit
input and output, never module state. `draw` must depend on the resource alone, and is
told apart by identity: pass a module-level function.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from gw.api import Resource, ResourceKey

R = TypeVar("R", bound=Resource)
Draw = Callable[[Any], frozenset[Hashable]]
#: Lists the keys of one kind, sorted (a snapshot's `keys_of_kind`).
Listing = Callable[[str], Sequence[ResourceKey]]

_NOTHING: frozenset[Hashable] = frozenset()


@dataclass(frozen=True, slots=True)
class Tally:
    """What `draw` gave for each resource of one kind (the non-empty answers), and for
    each value, how many resources gave it."""

    drawn: Mapping[ResourceKey, frozenset[Hashable]]
    counts: Mapping[Hashable, int]

    def values(self) -> frozenset[Hashable]:
        return frozenset(self.counts)


class Tallies:
    """The tallies one translation asked for, over its resources. Made from the last
    translation's (`moved`), a tally it had is moved on by the changed keys; any other is
    drawn from every resource the first time it is asked for."""

    def __init__(
        self,
        resources: Mapping[ResourceKey, Resource],
        listing: Listing,
        last: Mapping[tuple[type[Resource], Draw], Tally] | None = None,
        changed: Iterable[ResourceKey] = (),
    ) -> None:
        self._resources = resources
        self._listing = listing
        self._last = last or {}
        self._changed = tuple(changed)
        self.made: dict[tuple[type[Resource], Draw], Tally] = {}

    def moved(
        self,
        resources: Mapping[ResourceKey, Resource],
        listing: Listing,
        changed: Iterable[ResourceKey],
    ) -> Tallies:
        """The tallies of a translation whose resources differ from these in `changed`
        only (by identity: every other key holds the very same object). Only the tallies
        this translation made are carried: one it did not ask for is drawn again."""
        return Tallies(resources, listing, self.made, changed)

    def values(self, kind: type[R], draw: Callable[[R], frozenset[Hashable]]) -> frozenset[Any]:
        """Every value `draw` gives for some resource of `kind`."""
        key = (kind, draw)
        tally = self.made.get(key)
        if tally is None:
            last = self._last.get(key)
            if last is None:
                tally = self._drawn(kind, draw)
            else:
                tally = self._moved_on(last, kind, draw)
            self.made[key] = tally
        return tally.values()

    def _drawn(self, kind: type[R], draw: Callable[[R], frozenset[Hashable]]) -> Tally:
        drawn: dict[ResourceKey, frozenset[Hashable]] = {}
        counts: dict[Hashable, int] = {}
        resources = self._resources
        for key in self._listing(kind.KIND):
            resource = resources[key]
            if isinstance(resource, kind):
                _count(drawn, counts, key, draw(resource))
        return Tally(drawn, counts)

    def _moved_on(
        self, last: Tally, kind: type[R], draw: Callable[[R], frozenset[Hashable]]
    ) -> Tally:
        drawn = dict(last.drawn)
        counts = dict(last.counts)
        for key in self._changed:
            if key.kind != kind.KIND:
                continue
            for value in drawn.pop(key, _NOTHING):
                left = counts[value] - 1
                if left:
                    counts[value] = left
                else:
                    del counts[value]
            resource = self._resources.get(key)
            if isinstance(resource, kind):
                _count(drawn, counts, key, draw(resource))
        return Tally(drawn, counts)


def _count(
    drawn: dict[ResourceKey, frozenset[Hashable]],
    counts: dict[Hashable, int],
    key: ResourceKey,
    values: frozenset[Hashable],
) -> None:
    """Record what was drawn from `key` (nothing to record when it gave nothing)."""
    if values:
        drawn[key] = values
        for value in values:
            counts[value] = counts.get(value, 0) + 1
