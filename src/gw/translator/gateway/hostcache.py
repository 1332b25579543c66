"""Memoised VirtualService builders: each host as last built, and what that build read.

Editing one VirtualService among 100,000 must not cost building 100,000. Each
VirtualService is built on its own (`virtualhosts.build_host`), handing back its
contribution, findings and references as one value (`BuiltHost`), and the build records
what it looked at besides its own resource (`refs.Reads`): every resource it looked up
(the very object, or its absence; or, looked up through a view, only what the view gave:
a route reads of its Upstream whether it has subsets or a cloud function, not its hosts
or port, `destinations.destination_view`; a host of its AuthConfig the routes of its
logins, `extauth.AuthConfigUse`), every kind it listed, the state of every resource it
asked about, whether it looked at unreadable manifests, and every question it asked the
clock (`clock.Clock`: a certificate's expiry). A `Memo` is reused while the VirtualService
is the very same object and every one of those reads would give the same answer; what it
depends on is found from the reads, never listed per feature, so a new option that reads
through `refs`, `reports`, the snapshot or the clock is covered without code here.

The rest of what a build sees is the `context`: the options (but the time, which only
matters through the clock's answers), Settings' `requireRbac` and what they say about
routes (`RoutePolicy`); a change there rebuilds every host.

The cache is an explicit input and output of `translate()`, never module state: the
translator stays a pure function. `ReadIndex` (who read what) is kept up to date as the
cache moves from one translation to the next; a cache that is not the latest one rebuilds
it before use.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gw import api
from gw.api import Resource, ResourceKey
from gw.snapshot import InputError, Lineage, Snapshot, Source
from gw.translator.clock import Clock, same_answers
from gw.translator.gateway.contribution import BuiltHost, Contribution
from gw.translator.gateway.settings import DEFAULT_ROUTES, RoutePolicy
from gw.translator.gateway.virtualhosts import build_host
from gw.translator.ir.frozen import use_slot_setters
from gw.translator.options import Options
from gw.translator.refs import Reads, Refs, Viewed
from gw.translator.reports import Reports

R = TypeVar("R", bound=Resource)


@use_slot_setters
@dataclass(frozen=True, slots=True)
class Memo:
    """One VirtualService as last built, with what the build read."""

    built: BuiltHost
    reads: Reads
    clock: tuple[tuple[float, bool], ...] = ()


@dataclass(slots=True)
class ReadIndex:
    """Who read what: resource key → hosts that looked it up (or asked its state), kind →
    hosts that listed it, and the hosts that looked at unreadable manifests or the clock.
    Shared by successive caches and updated in place; `owner` is the cache it describes."""

    owner: object = None
    resources: defaultdict[ResourceKey, set[ResourceKey]] = field(
        default_factory=lambda: defaultdict(set)
    )
    kinds: defaultdict[str, set[ResourceKey]] = field(default_factory=lambda: defaultdict(set))
    broken: set[ResourceKey] = field(default_factory=set)
    clock: set[ResourceKey] = field(default_factory=set)

    def reset(self, owner: object) -> None:
        self.owner = owner
        for each in (self.resources, self.kinds, self.broken, self.clock):
            each.clear()

    def add(self, key: ResourceKey, memo: Memo) -> None:
        for read in (*memo.reads.resources, *memo.reads.states):
            self.resources[read].add(key)
        for kind in memo.reads.kinds:
            self.kinds[kind].add(key)
        if memo.reads.broken:
            self.broken.add(key)
        if memo.clock:
            self.clock.add(key)

    def remove(self, key: ResourceKey, memo: Memo) -> None:
        for read in (*memo.reads.resources, *memo.reads.states):
            self._discard(self.resources, read, key)
        for kind in memo.reads.kinds:
            self._discard(self.kinds, kind, key)
        self.broken.discard(key)
        self.clock.discard(key)

    @staticmethod
    def _discard(index: defaultdict[Any, set[ResourceKey]], at: Any, key: ResourceKey) -> None:
        found = index.get(at)
        if found is not None:
            found.discard(key)
            if not found:
                del index[at]


@dataclass(frozen=True, slots=True)
class HostCache:
    #: What every build saw besides its reads (see the module): a change rebuilds all.
    context: tuple[Any, ...]
    memos: Mapping[ResourceKey, Memo]
    #: The input errors the builds saw (for memos that looked at unreadable manifests).
    errors: tuple[InputError, ...] = ()
    index: ReadIndex = field(default_factory=ReadIndex, compare=False)

    def reusable(self, context: tuple[Any, ...]) -> Mapping[ResourceKey, Memo]:
        """The memos, when `context` is what they were built in; else nothing."""
        return self.memos if self.context == context else {}

    def readers(self) -> ReadIndex:
        """Who read what, for these memos (rebuilt if a later cache has moved it on)."""
        if self.index.owner is not self:
            self.index.reset(self)
            for key, memo in self.memos.items():
                self.index.add(key, memo)
        return self.index


def context_of(
    options: Options, require_rbac: bool, route_policy: RoutePolicy = DEFAULT_ROUTES
) -> tuple[Any, ...]:
    """What every host build sees besides its recorded reads."""
    return (dataclasses.replace(options, now=None), require_rbac, route_policy)


def still_valid(
    memo: Memo,
    vs: api.VirtualService,
    snapshot: Snapshot,
    listings: Listings,
    reports: Reports,
    same_errors: bool,
    now: float | None,
) -> bool:
    """Whether `memo` is what building `vs` now would give (see the module)."""
    reads = memo.reads
    resources = snapshot.resources
    return (
        memo.built.vs is vs
        and not reads.everything
        and (same_errors or not reads.broken)
        and all(
            resources.get(k) is r or (type(r) is Viewed and r.holds(resources.get(k)))
            for k, r in reads.resources.items()
        )
        and all(listings.same(kind, seen) for kind, seen in reads.kinds.items())
        and all(reports.state(k) is s for k, s in reads.states.items())
        and same_answers(list(memo.clock), now)
    )


class Listings:
    """Whether a kind's listing is what a build saw, each listing compared once."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._known: dict[int, bool] = {}

    def same(self, kind: str, seen: tuple[Resource, ...]) -> bool:
        known = self._known.get(id(seen))
        if known is None:
            resources = self._snapshot.resources
            now = self._snapshot.keys_of_kind(kind)
            known = len(now) == len(seen) and all(
                resources[k] is r for k, r in zip(now, seen, strict=True)
            )
            self._known[id(seen)] = known
        return known


def build_memo(
    vs: api.VirtualService,
    snapshot: Snapshot,
    options: Options,
    refs: Refs,
    reports: Reports,
    require_rbac: bool,
    route_policy: RoutePolicy = DEFAULT_ROUTES,
) -> Memo:
    """Build `vs`, recording what the build read."""
    reads = Reads()
    clock = Clock.recording(options.now)
    watched = WatchedSnapshot(snapshot, reads)
    built = build_host(
        vs,
        watched,
        options,
        refs,
        reports,
        require_rbac=require_rbac,
        route_policy=route_policy,
        reads=reads,
        clock=clock,
    )
    return Memo(built=built, reads=reads, clock=tuple(clock.answers or ()))


def build_hosts(
    snapshot: Snapshot,
    options: Options,
    refs: Refs,
    reports: Reports,
    *,
    require_rbac: bool,
    route_policy: RoutePolicy = DEFAULT_ROUTES,
    cache: HostCache | None,
) -> tuple[dict[ResourceKey, Contribution], HostCache]:
    """Every VirtualService's contribution (placed on the built-in `http`/`https`
    listeners), its findings and references merged into `reports` and `refs`; and the
    cache for the next translation. Every build sees the reports as they are before any
    host is merged, so that no host's outcome depends on the order hosts are built in."""
    context = context_of(options, require_rbac, route_policy)
    reusable = cache.reusable(context) if cache is not None else {}
    listings = Listings(snapshot)
    same_errors = cache is not None and cache.errors == snapshot.errors
    before = reports.scope()  # the reports as they are now, for every build to read
    memos: dict[ResourceKey, Memo] = {}
    for vs in snapshot.of_kind(api.VirtualService):
        memo = reusable.get(vs.key)
        if memo is None or not still_valid(
            memo, vs, snapshot, listings, before, same_errors, options.now
        ):
            memo = build_memo(vs, snapshot, options, refs, before, require_rbac, route_policy)
        memos[vs.key] = memo
    out: dict[ResourceKey, Contribution] = {}
    for key, memo in memos.items():
        merge(memo.built, refs, reports)
        if memo.built.contribution is not None:
            out[key] = memo.built.contribution
    return out, HostCache(context=context, memos=memos, errors=snapshot.errors)


def merge(built: BuiltHost, refs: Refs, reports: Reports) -> None:
    """One host's findings and references, into the build's."""
    reports.of(built.vs.key)  # Accepted unless it has findings
    reports.add(built.findings)
    refs.add(built.edges)


class WatchedSnapshot(Snapshot):
    """A snapshot whose lookups are recorded in `reads` (what a host build looked at).

    One is made per host build, and most builds never look at it (only a TLS host reads
    a secret through it): the recording views of its resources and errors are made when
    first asked for, instead of a whole snapshot's fields for every host."""

    __slots__ = ("_reads", "_inner")
    _reads: Reads
    _inner: Snapshot

    def __init__(self, inner: Snapshot, reads: Reads) -> None:
        # Snapshot's own fields stay unset (the properties below answer for them), but for
        # its index by kind, which `keys_of_kind` below leaves empty.
        object.__setattr__(self, "_reads", reads)
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_by_kind", {})

    @property
    def resources(self) -> Mapping[ResourceKey, Resource]:
        return _WatchedResources(self._inner.resources, self._reads)

    @property
    def errors(self) -> tuple[InputError, ...]:
        return _WatchedErrors(self._inner.errors, self._reads)

    @property
    def sources(self) -> Mapping[ResourceKey, Source]:
        return self._inner.sources

    @property
    def lineage(self) -> Lineage:
        return self._inner.lineage

    def of_kind(self, kind: type[R]) -> list[R]:
        self.keys_of_kind(kind.KIND)
        return self._inner.of_kind(kind)

    def keys_of_kind(self, kind: str) -> list[ResourceKey]:
        keys = self._inner.keys_of_kind(kind)
        resources = self._inner.resources
        self._reads.kinds[kind] = tuple(resources[k] for k in keys)
        return keys

    def kinds(self) -> list[str]:
        self._reads.everything = True
        return self._inner.kinds()


class _WatchedResources(Mapping[ResourceKey, Resource]):
    def __init__(self, inner: Mapping[ResourceKey, Resource], reads: Reads) -> None:
        self._inner, self._reads = inner, reads

    def __getitem__(self, key: ResourceKey) -> Resource:
        found = self._inner.get(key)
        self._reads.resources[key] = found
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, ResourceKey):
            return False
        found = self._inner.get(key)
        self._reads.resources[key] = found
        return found is not None

    def __iter__(self) -> Iterator[ResourceKey]:
        self._reads.everything = True
        return iter(self._inner)

    def __len__(self) -> int:
        self._reads.everything = True
        return len(self._inner)


class _WatchedErrors(tuple[InputError, ...]):
    """The snapshot's input errors; looking at them is recorded as reading broken ones."""

    _reads: Reads

    def __new__(cls, errors: Iterable[InputError], reads: Reads) -> _WatchedErrors:
        out = super().__new__(cls, errors)
        out._reads = reads
        return out

    def __iter__(self) -> Iterator[InputError]:
        self._reads.broken = True
        return super().__iter__()

    def __len__(self) -> int:
        self._reads.broken = True
        return super().__len__()

    def __bool__(self) -> bool:
        self._reads.broken = True
        return super().__len__() > 0
