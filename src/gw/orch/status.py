"""Status write-back to the orchestrator: `status.statuses.<controller namespace>` of each gw
resource, through the `status` subresource, only when it differs from what the object holds.

The control plane computes every status after each translation (`OrchStatusBook.write`). The
`StatusWriter` compares each changed one with the status the cluster object carries (as the
watch last delivered it) and sends a JSON merge patch for those that differ, which touches no
other controller's entry. It writes only:

- while this replica leads (`is_leader`): two control planes never fight over statuses; a
  new leader compares everything once, so a status computed while following is not lost;
- onto the generation it was computed from: when the object's spec moved on since the
  translated snapshot, the write waits for the translation of the new one;
- with the object's `resourceVersion` as a precondition: a `409 Conflict` means the object
  changed meanwhile; the watch brings the new version and the comparison runs again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from lightkube import AsyncClient
from lightkube.types import PatchType
from pydantic import ValidationError

from gw.api import ResourceKey
from gw.api.status import Status
from gw.orch.client import API_ERRORS, status_code
from gw.orch.kinds import BY_KIND
from gw.snapshot import Snapshot
from gw.store.status import StatusBook

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Observed:
    """What the cluster holds for one object, as the watch last delivered it."""

    resource_version: str
    generation: int | None
    #: `status.statuses.<controller namespace>` as stored, or None.
    status: Any


class ObservedObjects(Protocol):
    def observed(self, key: ResourceKey) -> Observed | None: ...

    def update_observed(self, key: ResourceKey, obj: Mapping[str, Any]) -> None: ...


class OrchStatusBook(StatusBook):
    """A `StatusBook` that tells the writer after every translation which statuses changed."""

    def __init__(self) -> None:
        super().__init__()
        self.on_write: Callable[[Iterable[ResourceKey]], None] = lambda _: None

    def write(
        self,
        statuses: Mapping[ResourceKey, Status],
        keys: Iterable[ResourceKey] | None = None,
        since: Mapping[ResourceKey, Status] | None = None,
    ) -> dict[ResourceKey, Status | None]:
        changed = super().write(statuses, keys, since)
        self.on_write(changed)
        return changed


def entry_patch(observed: Any, desired: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch that turns `observed` into exactly `desired` (keys it lacks are nulled)."""
    patch: dict[str, Any] = {}
    if isinstance(observed, Mapping):
        patch.update({k: None for k in observed if k not in desired})
    for key, value in desired.items():
        old = observed.get(key) if isinstance(observed, Mapping) else None
        patch[key] = entry_patch(old, value) if isinstance(value, Mapping) else value
    return patch


def same_status(observed: Any, desired: Status) -> bool:
    if not isinstance(observed, Mapping):
        return False
    try:
        return Status.model_validate(observed) == desired
    except ValidationError:
        return False


class StatusWriter:
    RETRY_SECONDS = 1.0

    def __init__(
        self,
        client: AsyncClient,
        namespace: str,
        book: StatusBook,
        objects: ObservedObjects,
        is_leader: Callable[[], bool] = lambda: True,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.book = book
        self.objects = objects
        self.is_leader = is_leader
        #: The snapshot the statuses were computed from (the control plane's last one).
        self.translated: Callable[[], Snapshot | None] = lambda: None
        self.written = 0
        self._dirty: set[ResourceKey] = set()
        #: Statuses computed from an older generation than the object has: compared again
        #: after the next translation, even when it computes the same status.
        self._waiting: set[ResourceKey] = set()
        self._wake = asyncio.Event()

    def translated_statuses(self, changed: Iterable[ResourceKey]) -> None:
        """After each translation: compare what changed, and what waited for it."""
        waiting, self._waiting = self._waiting, set()
        self.mark([*changed, *waiting])

    def mark(self, keys: Iterable[ResourceKey]) -> None:
        self._dirty.update(k for k in keys if k.kind in BY_KIND and BY_KIND[k.kind].custom)
        if self._dirty:
            self._wake.set()

    def mark_all(self) -> None:
        """Compare every status again (on becoming leader)."""
        self.mark(self.book.all())

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self.is_leader():
                continue
            keys, self._dirty = self._dirty, set()
            retry = [key for key in sorted(keys) if not await self._write(key)]
            if retry:
                self._dirty.update(retry)
                await asyncio.sleep(self.RETRY_SECONDS)
                self._wake.set()

    async def _write(self, key: ResourceKey) -> bool:
        """Write one status if it differs. False: try again later."""
        desired = self.book.get(key)
        observed = self.objects.observed(key)
        if desired is None or observed is None or same_status(observed.status, desired):
            return True
        if not self._translated_from(key, observed):
            self._waiting.add(key)  # a newer spec is on its way through the pipeline
            return True
        body = desired.model_dump(by_alias=True, mode="json")
        patch = {
            "metadata": {"resourceVersion": observed.resource_version},
            "status": {"statuses": {self.namespace: entry_patch(observed.status, body)}},
        }
        kind = BY_KIND[key.kind]
        try:
            obj = await self.client.patch(
                kind.resource.Status,
                key.name,
                patch,
                namespace=key.namespace,
                patch_type=PatchType.MERGE,
            )
        except API_ERRORS as exc:  # every failure is retried or dropped
            code = status_code(exc)
            if code == 404:
                return True  # deleted meanwhile
            if code == 409:
                log.debug("status of %s: object changed meanwhile, comparing again", key)
                return True  # the watch delivers the new version, which marks it again
            log.warning("cannot write the status of %s: %s", key, exc)
            return False
        self.written += 1
        self.objects.update_observed(key, obj.to_dict())
        log.info("status of %s: %s", key, desired.state.value)
        return True

    def _translated_from(self, key: ResourceKey, observed: Observed) -> bool:
        snapshot = self.translated()
        if snapshot is None:
            return True
        resource = snapshot.resources.get(key)
        if resource is None:
            return True  # an object that does not parse: its status is about what is stored
        return resource.metadata.generation in (None, observed.generation)
