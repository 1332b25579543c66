"""`StatusBook`: the latest status of every resource, and which ones changed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gw.api import ResourceKey
from gw.api.status import Status


class StatusBook:
    """Keeps statuses in memory. A write reports only the keys whose status changed, so
    that observers (`gw up` printing, the orchestrator's status subresource) see changes,
    not repeats."""

    def __init__(self) -> None:
        self._statuses: dict[ResourceKey, Status] = {}

    def write(
        self, statuses: Mapping[ResourceKey, Status], keys: Iterable[ResourceKey] | None = None
    ) -> dict[ResourceKey, Status | None]:
        """Replace all statuses; return the changed ones (None for a resource now gone).
        `keys`: the only resources whose status may differ from the last write (an
        incremental translation says which); the others are not compared."""
        changed: dict[ResourceKey, Status | None] = {}
        if keys is None:
            for key, new in statuses.items():
                before = self._statuses.get(key)
                if before is not new and before != new:
                    changed[key] = new
            for key in self._statuses.keys() - statuses.keys():
                changed[key] = None
            self._statuses = dict(statuses)
            return changed
        for key in keys:
            old, status = self._statuses.get(key), statuses.get(key)
            if old is status or old == status:
                continue
            changed[key] = status
            if status is None:
                del self._statuses[key]
            else:
                self._statuses[key] = status
        return changed

    def get(self, key: ResourceKey) -> Status | None:
        return self._statuses.get(key)

    def all(self) -> dict[ResourceKey, Status]:
        return dict(self._statuses)
