"""`OrchStore`: resources kept in the orchestrator (Kubernetes), behind the same interface as
`DirectoryStore`: `watch()` yields `Snapshot`s, `statuses` takes the computed statuses.

For every watched kind (gw's custom resources; Secrets, Services, Endpoints, Pods) and every
watched namespace (all, or `watch_namespaces` plus the controller's), a reflector lists the
objects, then watches from the list's `resourceVersion`:

- the server ends a watch now and then (`timeoutSeconds`): the client watches again from the
  last version it saw;
- a connection that drops or an API server that answers errors: watch again from the last
  version, after a back-off (0.2 s doubling to 30 s, with jitter);
- `410 Gone` (the version is older than the server's history, as an `ERROR` event or an HTTP
  status): list again and replace what the kind holds (a resync).

The first snapshot comes when every kind has been listed once, so that no resource is judged
against a half-read cluster. An object that fails gw's validation becomes an `InputError`
with its key, like a broken file: the resource is `Rejected` and its last accepted version
keeps serving. A change that only touches an object's status or resourceVersion yields no new
snapshot (gw's own status writes would otherwise make it translate again).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lightkube import AsyncClient

from gw import defaults
from gw.api import ManifestError, Resource, ResourceKey, parse_document
from gw.orch.client import API_ERRORS, status_code
from gw.orch.kinds import WATCHED, WatchedKind
from gw.orch.status import Observed, OrchStatusBook, StatusWriter
from gw.snapshot import InputError, Snapshot, Source
from gw.store.status import StatusBook

log = logging.getLogger(__name__)

ALL_NAMESPACES = "*"


@dataclass(slots=True)
class _Object:
    raw: dict[str, Any]
    resource: Resource | None
    error: ManifestError | None
    observed: Observed


class OrchStore:
    BACKOFF_MIN = 0.2
    BACKOFF_MAX = 30.0
    #: Ask the server to end each watch after this long (it then resumes from its version).
    WATCH_TIMEOUT = 300
    LIST_CHUNK = 500
    #: After a change, wait this long for more before building a snapshot.
    BATCH_SECONDS = 0.01

    def __init__(
        self,
        client: AsyncClient,
        *,
        namespace: str = defaults.NAMESPACE,
        watch_namespaces: Sequence[str] = (),
        kinds: Sequence[WatchedKind] = WATCHED,
        is_leader: Callable[[], bool] = lambda: True,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.kinds = tuple(kinds)
        self.scopes: tuple[str, ...] = (
            tuple(sorted({*watch_namespaces, namespace})) if watch_namespaces else (ALL_NAMESPACES,)
        )
        book = OrchStatusBook()
        self.statuses: StatusBook = book
        self.writer = StatusWriter(client, namespace, book, self, is_leader)
        book.on_write = self.writer.translated_statuses
        self.relists = 0
        self.reconnects = 0
        self._objects: dict[ResourceKey, _Object] = {}
        self._synced: set[tuple[str, str]] = set()
        self._changed = asyncio.Event()
        self._dirty = True
        self._snapshot: Snapshot | None = None

    # --- the Store interface -------------------------------------------------------------

    async def watch(self) -> AsyncIterator[Snapshot]:
        """Yield a snapshot once everything is listed, then after every batch of changes.

        Raises when a reflector or the status writer stops: they retry every failure of the
        cluster, so one that stopped met a bug, and a store that no longer follows the
        cluster must say so rather than keep serving what it read last."""
        tasks = [
            asyncio.create_task(self._reflect(kind, scope), name=f"watch {kind.name} {scope}")
            for kind in self.kinds
            for scope in self.scopes
        ]
        tasks.append(asyncio.create_task(self.writer.run(), name="status writer"))
        for task in tasks:
            task.add_done_callback(lambda _: self._changed.set())
        try:
            while len(self._synced) < len(self.kinds) * len(self.scopes):
                await self._changed.wait()
                self._changed.clear()
                _raise_if_stopped(tasks)
            log.info("orch: listed %d objects; watching", len(self._objects))
            while True:
                self._changed.clear()
                yield self.snapshot()
                await self._changed.wait()
                _raise_if_stopped(tasks)
                await asyncio.sleep(self.BATCH_SECONDS)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def snapshot(self) -> Snapshot:
        """The objects as last seen (the same object while nothing changed)."""
        if self._snapshot is None or self._dirty:
            self._snapshot = self._build()
            self._dirty = False
        return self._snapshot

    # --- what the status writer reads ----------------------------------------------------

    def observed(self, key: ResourceKey) -> Observed | None:
        entry = self._objects.get(key)
        return entry.observed if entry else None

    def update_observed(self, key: ResourceKey, obj: Mapping[str, Any]) -> None:
        entry = self._objects.get(key)
        if entry is not None:
            meta = obj.get("metadata") or {}
            if _newer(meta.get("resourceVersion"), entry.observed.resource_version):
                entry.observed = self._observe(obj, custom=True)

    # --- reflectors ----------------------------------------------------------------------

    async def _reflect(self, kind: WatchedKind, scope: str) -> None:
        backoff = self.BACKOFF_MIN
        version: str | None = None
        while True:
            try:
                if version is None:
                    version = await self._relist(kind, scope)
                async for event, obj in self.client.watch(
                    kind.resource,
                    namespace=scope,
                    resource_version=version,
                    server_timeout=self.WATCH_TIMEOUT,
                ):
                    raw = obj.to_dict()
                    version = (raw.get("metadata") or {}).get("resourceVersion") or version
                    self._on_event(kind, event, raw)
                    backoff = self.BACKOFF_MIN
            except asyncio.CancelledError:
                raise
            except API_ERRORS as exc:  # any failure of the cluster: retry, never give up
                code = status_code(exc)
                if code == 410:
                    log.info(
                        "orch: %s changed too much since %s: listing again", kind.name, version
                    )
                    self.relists += 1
                    version = None
                    continue
                if code == 404 and version is None:
                    self._absent(kind, scope)
                else:
                    log.warning(
                        "orch: watching %s in %s failed (%s); again in %.1fs",
                        kind.name,
                        scope,
                        exc or type(exc).__name__,
                        backoff,
                    )
                self.reconnects += 1
                await asyncio.sleep(backoff * random.uniform(0.8, 1.2))
                backoff = min(backoff * 2, self.BACKOFF_MAX)

    async def _relist(self, kind: WatchedKind, scope: str) -> str:
        listing = self.client.list(kind.resource, namespace=scope, chunk_size=self.LIST_CHUNK)
        fresh: dict[ResourceKey, _Object] = {}
        async for obj in listing:
            entry = self._parse(kind, obj.to_dict())
            fresh[_key(kind, entry.raw)] = entry
        version = listing.resourceVersion
        for key in [k for k in self._objects if _in_scope(k, kind, scope)]:
            if key not in fresh:
                del self._objects[key]
                self._dirty = True
        for key, entry in fresh.items():
            self._store(kind, key, entry)
        self._synced.add((kind.name, scope))
        self._changed.set()
        return version

    def _absent(self, kind: WatchedKind, scope: str) -> None:
        """The server does not serve the kind: its CRD is not installed. Nothing of it exists
        until it is; the control plane serves the rest meanwhile."""
        if (kind.name, scope) not in self._synced:
            log.error(
                "orch: the server does not serve %s: install the CRDs (`gw crds | kubectl "
                "apply -f -`)",
                kind.name,
            )
            self._synced.add((kind.name, scope))
            self._changed.set()

    def _on_event(self, kind: WatchedKind, event: str, raw: dict[str, Any]) -> None:
        if event == "BOOKMARK":
            return
        key = _key(kind, raw)
        if event == "DELETED":
            if self._objects.pop(key, None) is not None:
                self._dirty = True
                self._changed.set()
            return
        self._store(kind, key, self._parse(kind, raw))

    def _store(self, kind: WatchedKind, key: ResourceKey, entry: _Object) -> None:
        old = self._objects.get(key)
        if old is not None and _same_content(old.raw, entry.raw):
            old.observed = entry.observed  # a status or version change only
        else:
            self._objects[key] = entry
            self._dirty = True
            self._changed.set()
        if kind.custom:
            self.writer.mark([key])

    def _parse(self, kind: WatchedKind, obj: Mapping[str, Any]) -> _Object:
        raw = dict(obj)
        raw["apiVersion"], raw["kind"] = kind.model.API_VERSION, kind.model.KIND
        meta = dict(raw.get("metadata") or {})
        meta.pop("managedFields", None)
        raw["metadata"] = meta
        observed = self._observe(raw, kind.custom)
        if kind.custom:
            raw.pop("status", None)  # statuses are gw's output, never its input
        try:
            return _Object(raw, parse_document(raw), None, observed)
        except ManifestError as exc:
            return _Object(raw, None, exc, observed)

    def _observe(self, obj: Mapping[str, Any], custom: bool) -> Observed:
        meta = obj.get("metadata") or {}
        status = obj.get("status") if custom else None
        statuses = status.get("statuses") if isinstance(status, Mapping) else None
        mine = statuses.get(self.namespace) if isinstance(statuses, Mapping) else None
        return Observed(str(meta.get("resourceVersion") or ""), meta.get("generation"), mine)

    def _build(self) -> Snapshot:
        resources: dict[ResourceKey, Resource] = {}
        sources: dict[ResourceKey, Source] = {}
        errors: list[InputError] = []
        for key in sorted(self._objects):
            entry = self._objects[key]
            source = Source(f"{key.kind} {key.namespace}/{key.name} in the cluster", 0)
            if entry.resource is not None:
                resources[key] = entry.resource
                sources[key] = source
            elif entry.error is not None:
                errors.append(InputError(source, entry.error.details(), key))
        return Snapshot(resources=resources, sources=sources, errors=tuple(errors))


def _raise_if_stopped(tasks: Sequence[asyncio.Task[None]]) -> None:
    for task in tasks:
        if task.done() and not task.cancelled():
            raise RuntimeError(f"orch: {task.get_name()} stopped") from task.exception()


def _key(kind: WatchedKind, raw: Mapping[str, Any]) -> ResourceKey:
    meta = raw.get("metadata") or {}
    return ResourceKey(kind.model.KIND, str(meta.get("namespace") or ""), str(meta.get("name")))


def _in_scope(key: ResourceKey, kind: WatchedKind, scope: str) -> bool:
    return key.kind == kind.model.KIND and scope in (ALL_NAMESPACES, key.namespace)


def _same_content(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal but for `metadata.resourceVersion` (statuses are already left out)."""

    def content(raw: Mapping[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in raw["metadata"].items() if k != "resourceVersion"}
        return {**raw, "metadata": meta}

    return content(a) == content(b)


def _newer(version: Any, than: str) -> bool:
    try:
        return int(version) > int(than)
    except (TypeError, ValueError):
        return True


async def configured_watch_namespaces(client: AsyncClient, namespace: str) -> tuple[str, ...]:
    """`watchNamespaces` of the Settings `default` in the controller namespace (read once at
    start: a change takes effect when the control plane restarts)."""
    settings = next(w for w in WATCHED if w.model.KIND == "Settings")
    try:
        found = await client.get(settings.resource, "default", namespace=namespace)
    except API_ERRORS as exc:  # no Settings, no CRD yet, or no answer: watch everything
        log.info("orch: no Settings default in %s (%s): watching all namespaces", namespace, exc)
        return ()
    spec = found.to_dict().get("spec") or {}
    names = spec.get("watchNamespaces") or []
    return tuple(str(n) for n in names if isinstance(n, str) and n)
