"""`Xds`: the xDS resources of one proxy, and `Messages`, resources of one type by name.

`Messages` iterates in name order (so an unchanged Proxy gives byte-identical output and
the xDS server sends nothing), and can be made from another with a few names changed
without sorting again (`changed`): it then remembers which (`base`, `names`), so that
packing them for the xDS server (`gw.xds.cache`) redoes only those.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from google.protobuf.message import Message


class Messages(Mapping[str, Message]):
    """Resources of one type by name, in name order."""

    __slots__ = ("_names", "_by_name", "base", "names")

    def __init__(self, by_name: Mapping[str, Message] | None = None) -> None:
        found = dict(by_name or {})
        self._names = sorted(found)
        self._by_name = found
        #: The Messages these were made from with `changed`, and the names it changed.
        self.base: Messages | None = None
        self.names: frozenset[str] = frozenset()

    def changed(self, put: Mapping[str, Message], removed: Iterable[str]) -> Messages:
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
        return self._by_name[name]

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
