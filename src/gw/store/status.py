"""`StatusBook`: the latest status of every resource, and which ones changed."""

from __future__ import annotations

from collections.abc import Mapping

from gw.api import ResourceKey
from gw.api.status import Status


class StatusBook:
    """Keeps statuses in memory. A write reports only the keys whose status changed, so
    that observers (`gw up` printing, the orchestrator's status subresource) see changes,
    not repeats."""

    def __init__(self) -> None:
        self._statuses: dict[ResourceKey, Status] = {}

    def write(self, statuses: Mapping[ResourceKey, Status]) -> dict[ResourceKey, Status | None]:
        """Replace all statuses; return the changed ones (None for a resource now gone)."""
        changed: dict[ResourceKey, Status | None] = {}
        for key, status in statuses.items():
            if self._statuses.get(key) != status:
                changed[key] = status
        for key in self._statuses.keys() - statuses.keys():
            changed[key] = None
        self._statuses = dict(statuses)
        return changed

    def get(self, key: ResourceKey) -> Status | None:
        return self._statuses.get(key)

    def all(self) -> dict[ResourceKey, Status]:
        return dict(self._statuses)
