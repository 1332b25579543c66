"""`Xds`: the xDS resources of one proxy, and `Messages`, resources of one type by name.

`Messages` iterates in name order (so an unchanged Proxy gives byte-identical output and
the xDS server sends nothing), and can be made from another with a few names changed
without sorting again (`changed`): it then remembers which (`base`, `names`), so that
packing them for the xDS server (`gw.xds.cache`) redoes only those.

A resource may be held as its serialized bytes (`Wire`): the many scopes and route
configurations of a large listener are. A protobuf message built on its own costs about
1.6 KB however small it is (its arena), and the same resource serialized a tenth of that:
at 100,000 virtual hosts, 250 MB of the control plane's memory. Reading a `Messages` gives
messages either way (a `Wire` is parsed when read); packing takes the bytes as they are
(`raw`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from google.protobuf.message import Message

from gw.translator.envoy import names


@dataclass(frozen=True, slots=True)
class Wire:
    """A resource as its deterministic serialization (see the module)."""

    kind: type[Message]
    data: bytes

    @classmethod
    def of(cls, message: Message) -> Wire:
        return cls(type(message), message.SerializeToString(deterministic=True))

    @property
    def type_url(self) -> str:
        return names.type_url(self.kind)

    def message(self) -> Message:
        return self.kind.FromString(self.data)


#: A resource as a `Messages` holds it.
Resource = Message | Wire


def length_delimited(number: int, data: bytes) -> bytes:
    """Field `number` of a message holding `data` (bytes, a string or a message) as
    protobuf serializes it: its key, its length, the data."""
    return _varint((number << 3) | 2) + _varint(len(data)) + data


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class Messages(Mapping[str, Message]):
    """Resources of one type by name, in name order."""

    __slots__ = ("_names", "_by_name", "base", "names")

    def __init__(self, by_name: Mapping[str, Resource] | None = None) -> None:
        found = dict(by_name.raw_items() if isinstance(by_name, Messages) else by_name or {})
        self._names = sorted(found)
        self._by_name = found
        #: The Messages these were made from with `changed`, and the names it changed.
        self.base: Messages | None = None
        self.names: frozenset[str] = frozenset()

    def changed(self, put: Mapping[str, Resource], removed: Iterable[str]) -> Messages:
        """These with `put` set and `removed` gone (made, never changed in place)."""
        out = Messages.__new__(Messages)
        out._names, out._by_name = list(self._names), dict(self._by_name)
        for name in removed:
            if out._by_name.pop(name, None) is not None:
                del out._names[bisect.bisect_left(out._names, name)]
        for name, message in put.items():
            if name not in out._by_name:
                bisect.insort(out._names, name)
            out._by_name[name] = message
        out.base, out.names = self, frozenset(put) | frozenset(removed)
        return out

    def __getitem__(self, name: str) -> Message:
        found = self._by_name[name]
        return found.message() if isinstance(found, Wire) else found

    def raw(self, name: str) -> Resource | None:
        """The resource as held (a `Wire` is not parsed), None when there is none."""
        return self._by_name.get(name)

    def raw_items(self) -> Iterator[tuple[str, Resource]]:
        """Each name and its resource as held, in name order."""
        return ((name, self._by_name[name]) for name in self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name


@dataclass(frozen=True, slots=True)
class Xds:
    """xDS resources of one proxy: type URL → resource name → message."""

    resources: Mapping[str, Mapping[str, Message]]

    def of(self, type_url: str) -> Mapping[str, Message]:
        return self.resources.get(type_url, {})
