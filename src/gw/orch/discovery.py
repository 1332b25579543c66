"""`gw discovery --orch`: the Upstreams discovery generates become custom resources that
`kubectl get upstreams` lists.

The rules are those of the folder (`discovered.py`): a generated upstream is created when its
name is free, replaced while discovery still owns it (unedited since generated) and its
content is out of date, and deleted when its service port is gone. An upstream somebody
edited or wrote is never touched. Replacements carry the object's `resourceVersion`, so an
edit made meanwhile wins (`409 Conflict`) and is judged again on the next snapshot.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lightkube import AsyncClient

from gw import api
from gw.api import Resource, ResourceKey
from gw.discovery.services import discover, owned
from gw.orch.client import API_ERRORS, status_code
from gw.orch.kinds import BY_KIND
from gw.orch.store import OrchStore
from gw.snapshot import Snapshot
from gw.store.discovered import Changes

log = logging.getLogger(__name__)


def manifest(resource: Resource, resource_version: str | None = None) -> dict[str, Any]:
    """The object to store: what a user would write (no defaults, no status)."""
    data = resource.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    data.pop("status", None)
    meta = resource.metadata
    data["metadata"] = {
        "name": meta.name,
        "namespace": meta.namespace,
        **({"labels": dict(meta.labels)} if meta.labels else {}),
        **({"annotations": dict(meta.annotations)} if meta.annotations else {}),
        **({"resourceVersion": resource_version} if resource_version else {}),
    }
    return data


def _content(resource: Resource) -> dict[str, Any]:
    data = manifest(resource)
    data.pop("apiVersion", None)
    data.pop("kind", None)
    return data


class OrchWriter:
    def __init__(self, client: AsyncClient) -> None:
        self.client = client

    async def sync(
        self,
        snapshot: Snapshot,
        wanted: Mapping[ResourceKey, Resource],
        stale: Iterable[ResourceKey],
        owned: Callable[[Resource], bool],
    ) -> Changes:
        """Create or replace every `wanted` resource that is missing or outdated and owned;
        delete `stale` ones still owned. Returns what changed."""
        changes = Changes()
        for key, resource in sorted(wanted.items()):
            existing = snapshot.resources.get(key)
            if existing is None and any(e.key == key for e in snapshot.errors):
                continue  # it is there, only unreadable: not ours to overwrite
            if existing is not None and (
                not owned(existing) or _content(existing) == _content(resource)
            ):
                continue
            if await self._put(key, resource, existing):
                changes.written.append(str(key))
        for key in sorted(stale):
            existing = snapshot.resources.get(key)
            if existing is not None and owned(existing) and await self._delete(key):
                changes.removed.append(str(key))
        return changes

    async def _put(self, key: ResourceKey, resource: Resource, existing: Resource | None) -> bool:
        kind = BY_KIND[key.kind].resource
        try:
            if existing is None:
                await self.client.create(kind(manifest(resource)))
            else:
                version = existing.metadata.resource_version
                await self.client.replace(kind(manifest(resource, version)))
        except API_ERRORS as exc:  # each object on its own; the next pass retries
            if status_code(exc) in (404, 409):
                log.info("%s changed meanwhile; judged again on the next pass", key)
            else:
                log.warning("cannot write %s: %s", key, exc)
            return False
        return True

    async def _delete(self, key: ResourceKey) -> bool:
        try:
            await self.client.delete(BY_KIND[key.kind].resource, key.name, namespace=key.namespace)
        except API_ERRORS as exc:
            if status_code(exc) == 404:
                log.debug("%s is gone already", key)
            else:
                log.warning("cannot delete %s: %s", key, exc)
            return False
        return True


async def run(client: AsyncClient, namespace: str) -> None:
    """Keep an Upstream custom resource for every service port.

    It reads Services, Upstreams and Settings from the cluster (never writing statuses: the
    control plane does) and writes through `OrchWriter`."""
    kinds = [BY_KIND[k.KIND] for k in (api.Service, api.Upstream, api.Settings)]
    store = OrchStore(client, namespace=namespace, kinds=kinds, is_leader=lambda: False)
    writer = OrchWriter(client)
    log.info("discovery: watching the cluster's services, writing upstreams to %s", namespace)
    async for snapshot in store.watch():
        found = discover(snapshot, namespace)
        changes = await writer.sync(snapshot, found.served, found.stale, owned)
        for key in changes.written:
            log.info("discovery: wrote %s", key)
        for key in changes.removed:
            log.info("discovery: removed %s (its service port is gone)", key)
