"""The resources page: every resource the control plane knows, with its status and reason,
rejected ones first, and the manifests that could not be read at all.

Rows come from the admin API's `/statuses` data (`gw.admin.server.status_rows`), the same
that `gwctl get` and `gwctl check` read, so that the console and gwctl never disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Worst first: what needs attention is at the top.
STATE_ORDER = {"Rejected": 0, "Warning": 1, "Pending": 2, "Accepted": 3}
#: Rows shown at most; filters narrow the rest.
SHOWN = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceRow:
    kind: str
    namespace: str
    name: str
    state: str
    reason: str
    messages: tuple[str, ...] = ()
    source: str | None = None

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}.{self.name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Unreadable:
    """A manifest no resource could be told from (invalid YAML, beyond a limit)."""

    source: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourcesView:
    rows: tuple[ResourceRow, ...]
    unreadable: tuple[Unreadable, ...]
    #: Rows by state, over every resource (before filters).
    counts: Mapping[str, int]
    kinds: tuple[str, ...]
    #: Rows that matched the filters (`rows` holds at most `SHOWN` of them).
    matched: int


def rows_of(statuses: Mapping[str, Any]) -> list[ResourceRow]:
    """The `/statuses` resources as rows, worst state first, then kind, namespace, name."""
    rows = [
        ResourceRow(
            kind=r["kind"],
            namespace=r["namespace"],
            name=r["name"],
            state=r["status"]["state"],
            reason=r["status"].get("reason", ""),
            messages=tuple(r["status"].get("messages") or ()),
            source=r.get("source"),
        )
        for r in statuses.get("resources", [])
    ]
    return sorted(rows, key=lambda r: (STATE_ORDER.get(r.state, 2), r.kind, r.namespace, r.name))


def unreadable_of(statuses: Mapping[str, Any]) -> list[Unreadable]:
    """Input errors that name no resource (those that do show as the resource, Rejected)."""
    return [
        Unreadable(source=e.get("source") or "(unknown file)", message=e["message"])
        for e in statuses.get("inputErrors", [])
        if not e.get("resource")
    ]


def resources_view(
    statuses: Mapping[str, Any], *, kind: str = "", state: str = "", text: str = ""
) -> ResourcesView:
    """The page's data: rows filtered by kind, state and a text found in the resource's
    name, namespace, reason or file (case-insensitive)."""
    rows = rows_of(statuses)
    needle = text.strip().lower()
    matched = [
        r
        for r in rows
        if (not kind or r.kind == kind)
        and (not state or r.state == state)
        and (not needle or needle in _searchable(r))
    ]
    return ResourcesView(
        rows=tuple(matched[:SHOWN]),
        unreadable=tuple(unreadable_of(statuses)),
        counts=Counter(r.state for r in rows),
        kinds=tuple(sorted({r.kind for r in rows})),
        matched=len(matched),
    )


def _searchable(row: ResourceRow) -> str:
    parts: Sequence[str] = (row.key, row.reason, row.source or "", *row.messages)
    return "\n".join(parts).lower()
