"""The loop: store → discovery → translate → xDS, and statuses back to the store.

Between the store and the translator sits a latest-value cell, not a queue: when files
change faster than translation runs, intermediate snapshots are skipped (last write wins).
Reading the store and translating run in worker threads so that the servers of the process
keep answering meanwhile. An exception in translation is a bug: it is logged, reported on
every Proxy's status (`proxy_status`, hence `gwctl get proxy` and `gwctl check`), and the
last good configuration keeps being served. Following the store and the translation loop
are supervised tasks (`gw.supervision`): a crash of either is logged, shown by the debug
server's `/tasks` and `gwctl check`, and the task starts again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import gc
import itertools
import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from gw import collector
from gw.api import ResourceKey
from gw.api.status import State, Status
from gw.snapshot import Snapshot
from gw.store.status import StatusBook
from gw.supervision import supervise
from gw.tracing import Trace
from gw.translator.options import Options
from gw.translator.reports import Finding, ResourceReport
from gw.translator.translation import Result, TranslationCache, translate
from gw.xds.cache import SnapshotCache

log = logging.getLogger(__name__)

StatusListener = Callable[[Mapping[ResourceKey, Status | None], Snapshot], None]


class Store(Protocol):
    statuses: StatusBook

    def watch(self) -> AsyncIterator[Snapshot]: ...


Discovery = Callable[[Snapshot], Snapshot]

T = TypeVar("T")


@dataclass(slots=True)
class Translation:
    """What the control plane last did: for the admin API and `gwctl`."""

    count: int = 0
    failures: int = 0
    last_duration: float = 0.0
    #: When the last successful translation was published.
    last_at: float = 0.0
    #: The traceback of the latest translation when it failed (None once one succeeds).
    error: str | None = None
    durations: list[float] = field(default_factory=list)

    def failure(self) -> str | None:
        """The latest failure as a Proxy's status says it, or None."""
        if self.error is None:
            return None
        exception = self.error.strip().splitlines()[-1]
        if self.last_at:
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.last_at))
            serving = f"the configuration translated at {when} keeps serving"
        else:
            serving = "nothing is served until a translation succeeds"
        return (
            f"the last translation failed ({exception}): a bug in gw; {serving}. The control "
            "plane's log has the traceback"
        )


def translate_with_gc_paused(snapshot: Snapshot, options: Options, last: Result | None) -> Result:
    """Translate with the cyclic garbage collector paused.

    Translation allocates many short-lived objects while the snapshot holds many long-lived
    ones; without the pause, collections scan the whole snapshot again and again (about a
    quarter of the time at 10,000 virtual services; `gw.collector`).
    """
    with collector.paused():
        if last is None:
            return translate(snapshot, options)
        return translate(snapshot, options, last.accepted, cache=last.cache)


async def _in_own_thread(work: Callable[[], T]) -> T:
    """`work()` (a translation, or making its cache) in a daemon thread of its own, which
    a stopping program leaves behind instead of waiting for it.

    The event loop's own threads are joined when the loop closes: a Ctrl-C during the
    first translation of 100,000 VirtualServices waited seconds for a result nobody would
    use. The wait is cancelled only when the control plane stops, and nothing the
    translation had begun is used after that; what it holds is freed with the process.
    """
    outcome: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        if not outcome.set_running_or_notify_cancel():
            return  # cancelled before it began
        try:
            outcome.set_result(work())
        except BaseException as error:  # handed to the waiting task, which logs it
            outcome.set_exception(error)

    threading.Thread(target=run, name="translation", daemon=True).start()
    return await asyncio.wrap_future(outcome)


def prepare_with_gc_paused(result: Result) -> None:
    """Make what the translation left for later (`TranslationCache.prepare`), with the
    collector paused as for the translation itself."""
    with collector.paused():
        result.cache.prepare()


#: A full garbage collection runs after this many seconds without changes...
FULL_COLLECTION_IDLE = 10.0
#: ...and at least once in this many translations (see `_keep_configuration_out_of_collections`).
FULL_COLLECTION_EVERY = 100

#: How many recent traces the control plane keeps for the debug server.
TRACES_KEPT = 50

TraceObserver = Callable[[Trace], None]


class ControlPlane:
    def __init__(
        self,
        store: Store,
        cache: SnapshotCache,
        options: Options = Options(),
        *,
        discovery: Discovery | None = None,
        on_status: StatusListener | None = None,
    ) -> None:
        self.store = store
        self.cache = cache
        self.options = options
        self.discovery = discovery
        self.on_status = on_status
        self.snapshot: Snapshot | None = None
        self.result: Result | None = None
        #: Every proxy role published so far (a vanished one is served an empty snapshot).
        self._proxy_roles: set[str] = set()
        self.translation = Translation()
        self.traces: deque[Trace] = deque(maxlen=TRACES_KEPT)
        #: Called after every translation (successful or not) with its trace.
        self.observers: list[TraceObserver] = []
        #: Set once a translation was published.
        self.ready = asyncio.Event()
        #: Set once the first snapshot was translated, or failed to translate.
        self.attempted = asyncio.Event()
        self._latest: Snapshot | None = None
        self._applied: Snapshot | None = None  # the store's snapshot last translated
        self._translating = False
        self._since_full_collection = 0
        self._full_collection_timer: asyncio.TimerHandle | None = None
        self._latest_read: tuple[float, float] | None = None
        self._changed = asyncio.Event()
        self._trace_ids = itertools.count(1)

    async def run(self) -> None:
        # What exists now (modules, classes, descriptors) lives as long as the process:
        # keep it out of every later collection, which then scans only configuration. What
        # a read or a translation makes is frozen as the collector resumes after them
        # (`gw.collector`); the full collections below take whatever garbage it held.
        gc.collect()
        gc.freeze()
        collector.freezing(True)
        try:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(supervise("store", self._follow_store), name="store")
                tasks.create_task(
                    supervise("translation", self._translate_forever), name="translation"
                )
        finally:
            collector.freezing(False)

    async def _follow_store(self) -> None:
        async for snapshot in self.store.watch():
            self._latest = snapshot
            # How long the store took to read it, when the store says (DirectoryStore does).
            read = float(getattr(self.store, "last_scan_seconds", 0.0) or 0.0)
            self._latest_read = (time.perf_counter(), read)
            self._changed.set()

    async def _translate_forever(self) -> None:
        """Translate as soon as something changed; changes that come meanwhile are taken
        together right after (the store hands over its latest snapshot: last write wins).
        There is no waiting for more: a change is live as soon as it can be, and an editor
        that saves in several steps costs an extra translation, which takes milliseconds
        when few resources changed (the store waits for half-written files itself)."""
        while True:
            await self._changed.wait()
            self._changed.clear()
            snapshot = self._latest
            if snapshot is not None and snapshot is not self._applied:
                await self.apply(snapshot, arrived=self._latest_read)
                self._keep_configuration_out_of_collections()

    def _keep_configuration_out_of_collections(self) -> None:
        """Garbage collection kept off the path of a change.

        The configuration is hundreds of thousands of long-lived objects (600,000 at
        10,000 virtual services); a full collection scans them all (~0.2 s), and Python
        runs one soon after each translation, often in the middle of the next change.
        Freezing after each publish (constant time) leaves later collections only the
        objects made since. The configuration holds no reference cycles, so refcounting
        still frees it when replaced; a full collection (unfreeze, collect, freeze) runs
        after `FULL_COLLECTION_IDLE` seconds without changes, and at least every
        `FULL_COLLECTION_EVERY` translations, for whatever cyclic garbage came in between.
        """
        gc.freeze()
        self._since_full_collection += 1
        if self._since_full_collection >= FULL_COLLECTION_EVERY:
            self._full_collection()
            return
        if self._full_collection_timer is not None:
            self._full_collection_timer.cancel()
        self._full_collection_timer = asyncio.get_running_loop().call_later(
            FULL_COLLECTION_IDLE, self._full_collection_when_idle
        )

    def _full_collection_when_idle(self) -> None:
        if self._changed.is_set() or self._translating:
            return  # the translation under way reschedules it
        self._full_collection()

    def _full_collection(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._since_full_collection = 0

    async def apply(
        self, snapshot: Snapshot, *, arrived: tuple[float, float] | None = None
    ) -> Result | None:
        """Translate one snapshot and publish it: xDS to the cache, statuses to the store.

        `arrived` is (perf_counter when the store handed the snapshot over, seconds the store
        spent reading it): it adds the `store` and `debounce` spans to the trace.
        """
        started = time.perf_counter()
        self._applied = snapshot
        trace = self._start_trace(started, arrived)
        try:
            if self.discovery is not None:
                with trace.span("discovery"):
                    snapshot = self.discovery(snapshot)
            trace.resources = len(snapshot.resources)
            options = dataclasses.replace(self.options, now=time.time())
            last = self.result
            with trace.span("translate"):
                self._translating = True
                try:
                    result = await _in_own_thread(
                        lambda: translate_with_gc_paused(snapshot, options, last)
                    )
                finally:
                    self._translating = False
        except Exception:  # a translator bug must not stop the control plane
            self.translation.error = trace.error = traceback.format_exc()
            self.translation.failures += 1
            log.exception("translation failed; the last good configuration keeps serving")
            self._finish_trace(trace)
            self.attempted.set()
            return None
        elapsed = time.perf_counter() - started
        self.translation.error = None
        self.translation.count += 1
        self.translation.last_duration = elapsed
        self.translation.last_at = time.time()
        self.translation.durations = (self.translation.durations + [elapsed])[-100:]
        self.snapshot = snapshot
        self.result = result
        with trace.span("publish"):
            self._publish_proxies(result)
            extauth_role = result.proxy.extauth_role
            # Served once there are AuthConfigs (and from then on, so deletions reach the
            # servers); an install without external auth has no extauth role at all.
            if _has_resources(result.extauth.resources) or self.cache.get(extauth_role):
                self.cache.set(extauth_role, result.extauth.resources)
            ratelimit_role = result.proxy.ratelimit_role
            if _has_resources(result.ratelimit.resources) or self.cache.get(ratelimit_role):
                self.cache.set(ratelimit_role, result.ratelimit.resources)
            # Only the statuses the translation redid are compared, when those it started
            # from are the ones last written (the book checks).
            since = last.statuses if last is not None else None
            changed = self.store.statuses.write(result.statuses, result.restated, since)
            if changed and self.on_status is not None:
                self.on_status(changed, snapshot)
        trace.status_changes = len(changed)
        log.info(
            "translated %d resources in %.1f ms (%d status changes)",
            len(snapshot.resources),
            elapsed * 1000,
            len(changed),
        )
        self._finish_trace(trace)
        self.ready.set()
        self.attempted.set()
        await self._prepare_next(result)
        return result

    async def _prepare_next(self, result: Result) -> None:
        """What the translation left for the next one to reuse, made once its result is
        published (after a full build: a tenth of it, 1 s at 100,000 VirtualServices, that
        the first configuration no longer waits for). Should making it fail (a bug), the
        next translation starts from scratch instead of failing the same way. An edit's
        incremental translation hands its cache over made: no thread for it."""
        if not result.cache.pending:
            return
        try:
            await _in_own_thread(lambda: prepare_with_gc_paused(result))
        except Exception:
            log.exception("preparing the next translation failed; it will be a full one")
            self.result = dataclasses.replace(result, cache=TranslationCache())

    def proxy_status(self, name: str) -> Status | None:
        """A Proxy's status: the last translation's, `Rejected` while the latest translation
        failed (what is served is older than the resources)."""
        status = self.result.proxy_statuses.get(name) if self.result else None
        failure = self.translation.failure()
        if failure is None:
            return status
        report = ResourceReport(errors=(Finding("", failure),))
        if status is None:
            return Status(state=State.REJECTED, reason=report.reason())
        return status.model_copy(update={"state": State.REJECTED, "reason": report.reason()})

    def _publish_proxies(self, result: Result) -> None:
        """Each proxy's resources under its role. A proxy that no gateway names any more
        is served an empty snapshot (its Envoys keep running, with nothing to serve, and
        pick up config again if a gateway names it later), as in the established gateway."""
        for role, xds in result.served.items():
            self.cache.set(role, xds.resources)
        for role in self._proxy_roles - set(result.served):
            self.cache.set(role, {type_url: {} for type_url in result.xds.resources})
        self._proxy_roles |= set(result.served)

    def _start_trace(self, started: float, arrived: tuple[float, float] | None) -> Trace:
        if arrived is None:
            return Trace(id=next(self._trace_ids), started_at=time.time(), origin=started)
        at, read = arrived
        trace = Trace(
            id=next(self._trace_ids),
            started_at=time.time() - (started - at) - read,
            origin=at - read,
        )
        if read:
            trace.add("store", at - read, at)
        trace.add("debounce", at, started)
        return trace

    def _finish_trace(self, trace: Trace) -> None:
        self.traces.append(trace)
        log.debug("translation trace: %s", trace.to_data())
        for observer in self.observers:
            try:
                observer(trace)
            except Exception:  # an observer (metrics) must not break the loop
                log.exception("trace observer failed")


def _has_resources(resources: Mapping[str, Mapping[str, object]]) -> bool:
    return any(resources.values())
