"""Every reference lookup, and the graph of who refers to whom.

Passes resolve references only through `Refs`, which records each edge (referrer, field,
referent). After stage 1, `propagate_rejections` walks the edges once: a resource that
refers to a rejected one is rejected too, with a finding naming the field and the
referent. No feature carries its own propagation code. A piece of building that should
hand its edges back as a value resolves through a `scope()`, whose `edges` are its own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from gw.api import STATUSLESS_KINDS, Resource, ResourceKey, ResourceRef
from gw.api.status import State
from gw.translator.ir.frozen import use_slot_setters
from gw.translator.reports import Reports
from gw.translator.tally import Listing, Tallies

R = TypeVar("R", bound=Resource)
V = TypeVar("V", bound=Hashable)

#: What a piece of building takes from a resource (None when it is absent), as a value
#: compared by equality: `Refs.resolve_view`.
View = Callable[[Resource | None], Hashable]


@use_slot_setters
@dataclass(frozen=True, slots=True)
class Viewed:
    """A resource looked up through a view: the object seen and what the view gave."""

    view: View
    seen: Resource | None
    value: Hashable

    def holds(self, now: Resource | None) -> bool:
        """Whether the view gives for `now` what it gave (not asked again for the very
        object seen)."""
        return now is self.seen or self.view(now) == self.value


@use_slot_setters
@dataclass(frozen=True, slots=True)
class Edge:
    referrer: ResourceKey
    field: str
    referent: ResourceKey


@dataclass(slots=True)
class Reads:
    """What a piece of building looked at through a recording `Refs.scope()` (and its
    `Reports.scope()`, `Clock`): each resource looked up (the object seen, None when
    absent; a `Viewed` when looked up through a view alone), each kind listed, whether it
    looked at broken manifests, the state of each resource it asked about. Its result can
    be reused while all of these are the same."""

    resources: dict[ResourceKey, Resource | Viewed | None] = field(default_factory=dict)
    #: Each kind listed, and the resources the listing gave.
    kinds: dict[str, tuple[Resource, ...]] = field(default_factory=dict)
    broken: bool = False
    states: dict[ResourceKey, State] = field(default_factory=dict)
    #: It went through every resource: nothing it made can be reused.
    everything: bool = False


#: Not looked up yet (None is a lookup that found nothing).
_UNREAD = object()


class Refs:
    def __init__(
        self,
        resources: Mapping[ResourceKey, Resource],
        broken: set[ResourceKey],
        listing: Listing | None = None,
        tallies: Tallies | None = None,
    ):
        self._resources = resources
        self._broken = broken
        self._listing = listing
        self.tallies = tallies
        self.edges: list[Edge] = []
        self._by_kind: dict[type[Resource], list[Resource]] = {}
        self._listed: dict[str, tuple[Resource, ...]] = {}
        self.reads: Reads | None = None

    def scope(self, reads: Reads | None = None) -> Refs:
        """Lookups over the same resources whose edges are recorded apart, in `edges`;
        with `reads`, every lookup is recorded there too."""
        scoped = Refs(self._resources, self._broken, self._listing, self.tallies)
        scoped._by_kind, scoped._listed = self._by_kind, self._listed
        scoped.reads = reads
        return scoped

    def _seen(self, key: ResourceKey) -> Resource | None:
        found = self._resources.get(key)
        if self.reads is not None:
            self.reads.resources[key] = found
        return found

    def resolve(
        self,
        kind: type[R],
        ref: ResourceRef,
        *,
        referrer: ResourceKey,
        field: str,
    ) -> R | None:
        """The referenced resource, or None when there is no valid one.

        An empty namespace in `ref` means the referrer's namespace. The edge is recorded
        even when the referent is missing or broken, so that propagation sees it.
        """
        key = self._shared(self.key(kind, ref, referrer))
        self.edges.append(Edge(referrer, sys.intern(field), key))
        found = self._seen(key)
        return found if isinstance(found, kind) else None

    def resolve_view(
        self,
        kind: type[R],
        ref: ResourceRef,
        *,
        referrer: ResourceKey,
        field: str,
        view: Callable[[R | None], V],
    ) -> V:
        """What `view` takes from the referenced resource (None when there is no valid one),
        with the edge recorded as `resolve` does. A recording scope notes the view and what
        it gave, not the resource: what was built from it is reused while the view gives
        the same, however else the resource changes. `view` must be given nothing else
        than what the building reads of the resource, and tolerate any resource or None."""
        key = self._shared(self.key(kind, ref, referrer))
        self.edges.append(Edge(referrer, sys.intern(field), key))
        found = self._resources.get(key)
        value = view(found if isinstance(found, kind) else None)
        if self.reads is not None:
            known = self.reads.resources.get(key, _UNREAD)
            if known is _UNREAD:
                self.reads.resources[key] = Viewed(cast(View, view), found, value)
            elif isinstance(known, Viewed) and known.view is not view:
                self.reads.resources[key] = found  # through two views: read whole
        return value

    def add(self, edges: Iterable[Edge]) -> None:
        """Record edges resolved elsewhere (through a `scope()`)."""
        self.edges.extend(edges)

    def link(self, referrer: ResourceKey, field: str, referent: ResourceKey) -> None:
        """Record an edge found without a `ResourceRef` (e.g. a generated upstream)."""
        self.edges.append(Edge(referrer, field, referent))

    def of_kind(self, kind: type[R]) -> list[R]:
        """Every resource of `kind`, by key (for selectors; link what they pick). Listed once
        per translation: selectors of many routes read the same list."""
        listed = self._by_kind.get(kind)
        if listed is None:
            if self._listing is not None:
                found = (self._resources[k] for k in self._listing(kind.KIND))
            else:
                found = (r for _, r in sorted(self._resources.items()))
            listed = self._by_kind[kind] = [r for r in found if isinstance(r, kind)]
        if self.reads is not None:
            seen = self._listed.get(kind.KIND)
            if seen is None:
                seen = self._listed[kind.KIND] = tuple(listed)
            self.reads.kinds[kind.KIND] = seen
        return listed  # type: ignore[return-value]

    def drawn(self, kind: type[R], draw: Callable[[R], frozenset[Hashable]]) -> frozenset[Any]:
        """Every value `draw` gives for some resource of `kind` (a fact of them all, for a
        global pass): from the translation's `Tallies`, which redraw only the resources
        changed since the last translation. A recording scope lists the kind instead, so
        what it builds depends on every resource of it, as it does."""
        if self.reads is not None or self.tallies is None:
            return frozenset(v for r in self.of_kind(kind) for v in draw(r))
        return self.tallies.values(kind, draw)

    def broken_of_kind(self, kind: type[Resource]) -> list[ResourceKey]:
        """Resources of `kind` whose manifest cannot be read now (their labels are unknown)."""
        if self.reads is not None:
            self.reads.broken = True
        return sorted(k for k in self._broken if k.kind == kind.KIND)

    def exists(self, key: ResourceKey) -> bool:
        """True when the resource exists, even if its current manifest is broken."""
        if self.reads is not None:
            self.reads.broken = True
        return self._seen(key) is not None or key in self._broken

    @staticmethod
    def key(kind: type[Resource], ref: ResourceRef, referrer: ResourceKey) -> ResourceKey:
        return ResourceKey(kind.KIND, ref.namespace or referrer.namespace, ref.name)

    def _shared(self, key: ResourceKey) -> ResourceKey:
        """`key`, or the equal key of the resource there: edges and reads keep it, and
        100,000 routes to ten Upstreams then keep ten keys, not 100,000 equal ones (field
        names are interned for the same reason)."""
        found = self._resources.get(key)
        return key if found is None else found.key


def propagate_rejections(refs: Refs, reports: Reports) -> set[ResourceKey]:
    """Reject every resource that refers, directly or through others, to a rejected one;
    the resources rejected in the end (those in a reference).

    Which resources end up rejected is the closure of the references; each one rejected
    this way gets one finding: its first reference (in the order they were recorded) to a
    resource rejected in the end. The outcome depends on the graph alone, not on the order
    the references are walked in, so a translation that redoes part of the graph
    (`gateway/incremental.py`) finds the same."""
    rejected = rejected_closure(refs.edges, reports)
    for referrer, edge in first_rejected_references(refs.edges, rejected, reports.rejected):
        reports.of(referrer).error(edge.field, rejection_message(edge.referent, reports))
    return rejected


def rejected_closure(edges: Iterable[Edge], reports: Reports) -> set[ResourceKey]:
    """The resources rejected once rejections flow from referents to referrers."""
    referrers: dict[ResourceKey, list[ResourceKey]] = {}
    keys: set[ResourceKey] = set()
    for edge in edges:
        if edge.referrer != edge.referent:
            referrers.setdefault(edge.referent, []).append(edge.referrer)
            keys.add(edge.referent)
            keys.add(edge.referrer)
    out = reports.rejected_among(keys)
    todo = list(out)
    while todo:
        for referrer in referrers.get(todo.pop(), ()):
            if referrer not in out:
                out.add(referrer)
                todo.append(referrer)
    return out


def first_rejected_references(
    edges: Iterable[Edge], closure: set[ResourceKey], rejected: Callable[[ResourceKey], bool]
) -> list[tuple[ResourceKey, Edge]]:
    """For each resource rejected only through its references: the first of them whose
    referent is in `closure`."""
    first: dict[ResourceKey, Edge] = {}
    for edge in edges:
        referrer = edge.referrer
        if (
            referrer != edge.referent
            and edge.referent in closure
            and referrer not in first
            and not rejected(referrer)
        ):
            first[referrer] = edge
    return list(first.items())


def rejection_message(referent: ResourceKey, reports: Reports) -> str:
    what = f"{referent.kind} {referent.namespace}.{referent.name}"
    if referent.kind in STATUSLESS_KINDS:  # only ever rejected for a bad manifest
        why = reports.of(referent).errors[0]
        return f"{what} cannot be read ({why}); fix it first"
    return f"{what} is rejected; fix it first (see its status)"
