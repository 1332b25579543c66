"""`StageCache`: what stage 1 keeps from one translation for the next, so that an edit of a
few VirtualServices redoes only what depends on them (`incremental.py`).

Besides the memoised host builds (`hostcache.py`), it keeps what the passes made of each
VirtualService (placed on its listeners, its server checks), the final findings, the
contributions chosen, and three indexes kept up to date from one translation to the next
(`Shared`): which VirtualServices claim each domain or SNI name on a listener (`Claims`:
hosts that claim one can only affect each other), the virtual hosts of each listener in
the order they are served (`Listing`), and who refers to whom (`referrers`). The indexes
are changed in place; each names the cache it describes (`owner`), and an older cache
finds it is no longer the owner and is not used incrementally.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gw.api import Resource, ResourceKey
from gw.api.status import State
from gw.snapshot import InputError, Token
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution, ListenerRole
from gw.translator.gateway.fallback import Claim, claims_of
from gw.translator.gateway.gateways import GatewayListener
from gw.translator.gateway.hostcache import HostCache
from gw.translator.refs import Edge
from gw.translator.reports import Findings, Reports
from gw.translator.tally import Tallies


class PendingStageCache:
    """The `StageCache` of a full build, made the first time it is asked for (`get`).

    Making it is a tenth of a full build (1 s at 100,000 VirtualServices) and none of what
    that build serves needs it: the control plane publishes first and makes it right after
    (`TranslationCache.prepare`), and a translation given it unmade makes it first. What it
    is made from is the finished build, which nothing changes afterwards."""

    __slots__ = ("_make", "_made", "_lock")

    def __init__(self, make: Callable[[], StageCache]) -> None:
        self._make: Callable[[], StageCache] | None = make
        self._made: StageCache | None = None
        self._lock = threading.Lock()

    def get(self) -> StageCache:
        with self._lock:
            if self._make is not None:
                self._made, self._make = self._make(), None
            assert self._made is not None
            return self._made


@dataclass(frozen=True, slots=True)
class ServerUse:
    """One VirtualService's check against gw's own servers (`servers.check_server_use`)."""

    findings: Findings
    edges: tuple[Edge, ...]


#: The check of a VirtualService that uses none of the servers: nothing found, no edge.
NO_SERVER_USE = ServerUse(findings=(), edges=())


@dataclass(slots=True)
class Claims:
    """Claim (listener role, domain or SNI, value) → the VirtualServices holding it (fresh
    or last accepted); and each one's claims. Tuples, not sets: kept for every host, and
    a claim is held by one host but where hosts clash (a tuple of one is a fifth of a
    set of one)."""

    by_claim: dict[Claim, tuple[ResourceKey, ...]] = field(default_factory=dict)
    by_key: dict[ResourceKey, tuple[Claim, ...]] = field(default_factory=dict)

    def hold(self, key: ResourceKey, claims: frozenset[Claim]) -> None:
        old = frozenset(self.by_key.get(key, ()))
        if old == claims:
            return
        for claim in old - claims:
            holders = tuple(k for k in self.by_claim[claim] if k != key)
            if holders:
                self.by_claim[claim] = holders
            else:
                del self.by_claim[claim]
        for claim in claims - old:
            self.by_claim[claim] = (*self.by_claim.get(claim, ()), key)
        if claims:
            self.by_key[key] = tuple(claims)
        else:
            self.by_key.pop(key, None)

    def neighbours(self, keys: Iterable[ResourceKey]) -> set[ResourceKey]:
        """`keys` and every VirtualService linked to them through shared claims."""
        out = set(keys)
        todo = list(out)
        while todo:
            for claim in self.by_key.get(todo.pop(), ()):
                holders = self.by_claim[claim]
                if len(holders) > 1:
                    for other in holders:
                        if other not in out:
                            out.add(other)
                            todo.append(other)
        return out


#: Where a virtual host is served on its listener (`proxies.assemble` then `_listeners`):
#: by name, then fresh ones first, then by resource.
Entry = tuple[str, bool, ResourceKey]


@dataclass(slots=True)
class Listing:
    """Each listener role's virtual hosts in served order (`vhosts`, with their places in
    `places`), and each resource's."""

    places: dict[ListenerRole, list[Entry]] = field(default_factory=dict)
    vhosts: dict[ListenerRole, list[ir.VirtualHost]] = field(default_factory=dict)
    of_key: dict[ResourceKey, tuple[tuple[ListenerRole, Entry], ...]] = field(default_factory=dict)

    def place(
        self, key: ResourceKey, entries: tuple[tuple[ListenerRole, Entry, ir.VirtualHost], ...]
    ) -> list[tuple[ListenerRole, ir.VirtualHost, bool]]:
        """`key`'s virtual hosts (its old ones gone); what left (False) and joined (True):
        nothing when they are the very ones it has, at the same places."""
        if self._holds(key, entries):
            return []
        moved: list[tuple[ListenerRole, ir.VirtualHost, bool]] = []
        for role, place in self.of_key.pop(key, ()):
            places, vhosts = self.places[role], self.vhosts[role]
            at = bisect.bisect_left(places, place)
            moved.append((role, vhosts[at], False))
            del places[at], vhosts[at]
            if not places:
                del self.places[role], self.vhosts[role]
        for role, place, vhost in entries:
            places = self.places.setdefault(role, [])
            at = bisect.bisect_left(places, place)
            places.insert(at, place)
            self.vhosts.setdefault(role, []).insert(at, vhost)
            moved.append((role, vhost, True))
        if entries:
            self.of_key[key] = tuple((role, place) for role, place, _ in entries)
        return moved

    def _holds(
        self, key: ResourceKey, entries: tuple[tuple[ListenerRole, Entry, ir.VirtualHost], ...]
    ) -> bool:
        held = self.of_key.get(key, ())
        if len(held) != len(entries) or not entries:
            return False
        for (role, place), (new_role, new_place, vhost) in zip(held, entries, strict=True):
            if role != new_role or place != new_place:
                return False
            places = self.places[role]
            if self.vhosts[role][bisect.bisect_left(places, place)] is not vhost:
                return False
        return True


@dataclass(slots=True)
class Shared:
    """The indexes successive caches share (see the module)."""

    owner: object = None
    claims: Claims = field(default_factory=Claims)
    listing: Listing = field(default_factory=Listing)
    #: Referent → the VirtualServices whose own references name it.
    referrers: dict[ResourceKey, set[ResourceKey]] = field(default_factory=dict)
    #: Each VirtualService's own referents (a tuple: kept for every host).
    referents: dict[ResourceKey, tuple[ResourceKey, ...]] = field(default_factory=dict)

    def refer(self, key: ResourceKey, edges: Iterable[Edge]) -> None:
        new = frozenset(e.referent for e in edges if e.referrer == key)
        old = frozenset(self.referents.get(key, ()))
        for referent in old - new:
            found = self.referrers[referent]
            found.discard(key)
            if not found:
                del self.referrers[referent]
        for referent in new - old:
            self.referrers.setdefault(referent, set()).add(key)
        if new:
            self.referents[key] = tuple(new)
        else:
            self.referents.pop(key, None)


@dataclass(frozen=True, slots=True)
class Foreign:
    """The VirtualServices whose build has findings or references on other resources
    (delegating ones: on their RouteTables), and those findings and references, in host
    order: what every translation adds again for the ones it does not rebuild."""

    keys: frozenset[ResourceKey] = frozenset()
    findings: Findings = ()
    edges: tuple[Edge, ...] = ()
    #: The resources the findings are on.
    targets: frozenset[ResourceKey] = frozenset()


@dataclass(frozen=True, slots=True, kw_only=True)
class StageCache:
    hosts: HostCache
    #: The snapshot built (its lineage token, its resources and input errors).
    token: Token
    resources: Mapping[ResourceKey, Resource]
    errors: tuple[InputError, ...]
    #: What every VirtualService's passes read besides itself (options, servers, gateways).
    fingerprint: tuple[Any, ...]
    #: The state of each resource other than a VirtualService after the global passes,
    #: and those rejected in the end.
    states: Mapping[ResourceKey, State]
    closure: frozenset[ResourceKey]
    #: Per VirtualService: its contribution placed on its listeners, its server check.
    placed: Mapping[ResourceKey, Contribution]
    server_use: Mapping[ResourceKey, ServerUse]
    #: The (listener role, domain) pairs claimed by several VirtualServices.
    conflicts: tuple[tuple[str, str], ...]
    #: The contributions chosen (the result's `accepted`), those that differ from the
    #: `previous` given, and those that are a last accepted one (not fresh).
    accepted: Mapping[ResourceKey, Contribution]
    changed: frozenset[ResourceKey]
    stale: frozenset[ResourceKey]
    #: VirtualServices whose chosen contribution holds more than virtual hosts.
    extras: frozenset[ResourceKey]
    #: VirtualServices whose build has findings or references on other resources, and
    #: those findings and references.
    foreign: Foreign
    #: The resources that are not VirtualServices with a report or a contribution, and
    #: the ones the install declared.
    others: frozenset[ResourceKey]
    declared: frozenset[ResourceKey]
    reports: Reports
    #: The references the passes before the VirtualServices recorded.
    edges: tuple[Edge, ...]
    shared: Shared
    #: What the global passes drew from every resource of a kind (`tally.py`).
    tallies: Tallies | None
    #: The listeners served, as chosen after the references (a Gateway rejected through
    #: one keeps its last listener, or has none), as the host passes read them
    #: (`incremental.placing`).
    gateways: tuple[GatewayListener, ...]

    def current(self) -> bool:
        """Whether the shared indexes describe this cache (it is the latest one)."""
        return self.shared.owner is self


def claims_of_key(placed: Contribution | None, previous: Contribution | None) -> frozenset[Claim]:
    """What a VirtualService claims, fresh or as last accepted (the hosts it may clash
    with are among those claiming the same)."""
    out: set[Claim] = set()
    for contribution in (placed, previous):
        if contribution is not None:
            out.update(claims_of(contribution))
    return frozenset(out)
