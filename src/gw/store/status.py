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
        #: The statuses last written (what a translation said), to know what `since` means.
        self._written: Mapping[ResourceKey, Status] | None = None

    def write(
        self,
        statuses: Mapping[ResourceKey, Status],
        keys: Iterable[ResourceKey] | None = None,
        since: Mapping[ResourceKey, Status] | None = None,
    ) -> dict[ResourceKey, Status | None]:
        """Replace all statuses; return the changed ones (None for a resource now gone).

        `keys` and `since`: `statuses` were derived from `since`, and only the resources in
        `keys` may differ from it (an incremental translation says which). When `since` is
        what was last written, only those are compared: at 100,000 resources comparing all
        would cost more than the translation. Otherwise every status is compared."""
        if keys is None or since is None or since is not self._written:
            changed = self._compare_all(statuses)
        else:
            changed = self._compare(statuses, keys)
        self._written = statuses
        return changed

    def _compare_all(
        self, statuses: Mapping[ResourceKey, Status]
    ) -> dict[ResourceKey, Status | None]:
        changed: dict[ResourceKey, Status | None] = {}
        for key, new in statuses.items():
            before = self._statuses.get(key)
            if before is not new and before != new:
                changed[key] = new
        for key in self._statuses.keys() - statuses.keys():
            changed[key] = None
        self._statuses = dict(statuses)
        return changed

    def _compare(
        self, statuses: Mapping[ResourceKey, Status], keys: Iterable[ResourceKey]
    ) -> dict[ResourceKey, Status | None]:
        changed: dict[ResourceKey, Status | None] = {}
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
