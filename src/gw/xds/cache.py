"""`SnapshotCache`: the resources each proxy role is served, packed once per update.

A role is `<namespace>~<proxy name>` (`gw-system~gateway-proxy`); every Envoy announcing
that role gets the same resources. Versions are content hashes: they change exactly when
content changes, and stay meaningful across control-plane restarts.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from google.protobuf import any_pb2
from google.protobuf.message import Message


@dataclass(frozen=True, slots=True)
class Entry:
    resource: any_pb2.Any
    digest: str


@dataclass(frozen=True, slots=True)
class NodeSnapshot:
    entries: Mapping[str, Mapping[str, Entry]]

    def select(self, type_url: str, names: Iterable[str] | None) -> list[tuple[str, Entry]]:
        """Resources of a type: all of them (names None), or just the named ones."""
        of_type = self.entries.get(type_url, {})
        if names is None:
            return sorted(of_type.items())
        return [(n, of_type[n]) for n in sorted(set(names)) if n in of_type]


def version_of(selected: list[tuple[str, Entry]]) -> str:
    digest = hashlib.sha256()
    for name, entry in selected:
        digest.update(name.encode())
        digest.update(entry.digest.encode())
    return digest.hexdigest()[:16]


def pack_resources(resources: Mapping[str, Mapping[str, Message]]) -> NodeSnapshot:
    entries: dict[str, dict[str, Entry]] = {}
    for type_url, by_name in resources.items():
        packed: dict[str, Entry] = {}
        for name, message in by_name.items():
            value = message.SerializeToString(deterministic=True)
            resource = any_pb2.Any(
                type_url="type.googleapis.com/" + message.DESCRIPTOR.full_name, value=value
            )
            packed[name] = Entry(resource, hashlib.sha256(value).hexdigest()[:16])
        entries[type_url] = packed
    return NodeSnapshot(entries)


class SnapshotCache:
    def __init__(self) -> None:
        self._snapshots: dict[str, NodeSnapshot] = {}
        self._watchers: dict[str, set[asyncio.Event]] = {}
        #: Set once anything has been published (the roles of the proxies are known).
        self.published = asyncio.Event()

    def set(self, role: str, resources: Mapping[str, Mapping[str, Message]]) -> None:
        self.set_packed(role, pack_resources(resources))

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
