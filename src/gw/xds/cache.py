"""`SnapshotCache`: the resources each proxy role is served, packed once per update.

A role is `<namespace>~<proxy name>` (`gw-system~gateway-proxy`); every Envoy announcing
that role gets the same resources. Each resource's version is a hash of its content, and a
type's version (state of the world) a hash of those: they change exactly when content
changes, and stay meaningful across control-plane restarts.

Packing is incremental: a resource whose message (or `Wire`) is the very object packed last
time keeps its packed form, and a type handed over as a `Messages` made from the last one with a
few names changed (`gw.translator.envoy.xds`) is packed for those names only. Each
`NodeSnapshot` remembers, for a few of the snapshots before it, which names of each type
changed since (`changed_since`): a delta stream sends those without comparing every
resource with what its client holds.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from google.protobuf import any_pb2
from google.protobuf.message import Message

from gw import collector
from gw.translator.envoy.names import type_url as type_url_of
from gw.translator.envoy.xds import Messages, Resource, Wire

#: Snapshots a snapshot remembers what changed since (see `changed_since`).
ANCESTORS = 8


@dataclass(frozen=True, slots=True)
class Entry:
    """A resource packed: its serialization (the `Any` is made when it is sent: one per
    resource kept would cost 0.5 KB each, 50 MB at 100,000 scopes)."""

    type_url: str
    value: bytes
    digest: str
    #: The resource packed (a later one that is the same object is not packed again).
    message: Resource | None = field(default=None, compare=False)

    @property
    def resource(self) -> any_pb2.Any:
        return any_pb2.Any(type_url=self.type_url, value=self.value)


class Token:
    """A snapshot's identity for its successors' `since` (never equal to another's)."""

    __slots__ = ()


Changes = Mapping[str, frozenset[str]]


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    entries: Mapping[str, Mapping[str, Entry]]
    token: Token = field(default_factory=Token, compare=False)
    #: For earlier snapshots' tokens: the names of each type that changed since.
    since: Mapping[Token, Changes] = field(default_factory=dict, compare=False)
    #: The mapping each type was packed from (to tell a `Messages` made from it).
    sources: Mapping[str, Mapping[str, Message]] = field(default_factory=dict, compare=False)
    _versions: dict[tuple[str, frozenset[str] | None], str] = field(
        default_factory=dict, compare=False, repr=False
    )

    def select(self, type_url: str, names: Iterable[str] | None) -> list[tuple[str, Entry]]:
        """Resources of a type: all of them (names None), or just the named ones."""
        of_type = self.entries.get(type_url, {})
        if names is None:
            return sorted(of_type.items())
        return [(n, of_type[n]) for n in sorted(set(names)) if n in of_type]

    def version(self, type_url: str, names: Iterable[str] | None) -> str:
        """The state-of-the-world version of what `select` gives (computed once)."""
        key = (type_url, None if names is None else frozenset(names))
        found = self._versions.get(key)
        if found is None:
            found = self._versions[key] = version_of(self.select(type_url, names))
        return found

    def changed_since(self, token: Token) -> Changes | None:
        """The names of each type that changed since the snapshot with `token` (None when
        it is not one this snapshot remembers)."""
        if token is self.token:
            return {}
        return self.since.get(token)


def version_of(selected: list[tuple[str, Entry]]) -> str:
    digest = hashlib.sha256()
    for name, entry in selected:
        digest.update(name.encode())
        digest.update(entry.digest.encode())
    return digest.hexdigest()[:16]


def pack(resource: Resource) -> Entry:
    if isinstance(resource, Wire):
        url, value = resource.type_url, resource.data
    else:
        url, value = type_url_of(type(resource)), resource.SerializeToString(deterministic=True)
    return Entry(url, value, hashlib.sha256(value).hexdigest()[:16], resource)


def pack_resources(
    resources: Mapping[str, Mapping[str, Message]], previous: NodeSnapshot | None = None
) -> NodeSnapshot:
    """`resources` packed, reusing what `previous` packed of the same messages (with the
    garbage collector paused: at 100,000 resources its passes over the heap were nine
    tenths of packing)."""
    with collector.paused():
        return _packed(resources, previous)


def _packed(
    resources: Mapping[str, Mapping[str, Message]], previous: NodeSnapshot | None
) -> NodeSnapshot:
    entries: dict[str, Mapping[str, Entry]] = {}
    changes: dict[str, frozenset[str]] = {}
    for type_url, by_name in resources.items():
        before = previous.entries.get(type_url, {}) if previous is not None else {}
        source = previous.sources.get(type_url) if previous is not None else None
        entries[type_url], changes[type_url] = _pack_type(by_name, before, source)
    since: dict[Token, Changes] = {}
    if previous is not None:
        for type_url in previous.entries.keys() - resources.keys():
            changes[type_url] = frozenset(previous.entries[type_url])
        since[previous.token] = changes
        for token, earlier in list(previous.since.items())[: ANCESTORS - 1]:
            since[token] = {
                t: earlier.get(t, frozenset()) | changes.get(t, frozenset())
                for t in earlier.keys() | changes.keys()
            }
    return NodeSnapshot(entries, since=since, sources=dict(resources))


def _pack_type(
    by_name: Mapping[str, Message],
    before: Mapping[str, Entry],
    source: Mapping[str, Message] | None,
) -> tuple[dict[str, Entry], frozenset[str]]:
    """One type's entries, and the names whose entry changed (or went)."""
    if by_name is source:  # the very resources packed last time (e.g. unchanged scopes)
        return dict(before), frozenset()
    if isinstance(by_name, Messages) and by_name.base is not None and by_name.base is source:
        out = dict(before)  # a `Messages` made from the last one: only its names changed
        for name in by_name.names:
            message = by_name.raw(name)
            if message is None:
                out.pop(name, None)
            else:
                out[name] = pack(message)
        return out, by_name.names
    out = {}
    changed = set()
    held = by_name.raw_items() if isinstance(by_name, Messages) else by_name.items()
    for name, message in held:
        known = before.get(name)
        if known is None or known.message is not message:
            known = pack(message)
            if before.get(name) != known:
                changed.add(name)
        out[name] = known
    changed.update(n for n in before if n not in out)
    return out, frozenset(changed)


class SnapshotCache:
    def __init__(self) -> None:
        self._snapshots: dict[str, NodeSnapshot] = {}
        self._watchers: dict[str, set[asyncio.Event]] = {}
        #: Set once anything has been published (the roles of the proxies are known).
        self.published = asyncio.Event()

    def set(self, role: str, resources: Mapping[str, Mapping[str, Message]]) -> None:
        self.set_packed(role, pack_resources(resources, self._snapshots.get(role)))

    def set_packed(self, role: str, snapshot: NodeSnapshot) -> None:
        self._snapshots[role] = snapshot
        self.published.set()
        for event in self._watchers.get(role, ()):
            event.set()

    def get(self, role: str) -> NodeSnapshot | None:
        return self._snapshots.get(role)

    def roles(self) -> list[str]:
        return sorted(self._snapshots)

    def watch(self, role: str, event: asyncio.Event) -> None:
        """Set `event` whenever the snapshot of `role` changes."""
        self._watchers.setdefault(role, set()).add(event)

    def unwatch(self, role: str, event: asyncio.Event) -> None:
        self._watchers.get(role, set()).discard(event)
