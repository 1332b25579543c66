"""`gw discovery --dir DIR`: discovery as its own process, writing upstream manifests.

It watches the folder like the control plane does and keeps `DIR/discovered/` in step with
the services in it. A control plane serving the same folder reads those files as it reads
any manifest (and, when it runs its own discovery stage too, the two agree: the files hold
exactly what the stage generates).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from gw.discovery.services import discover, owned
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.store.discovered import Changes, DiscoveredFiles

log = logging.getLogger(__name__)


def sync_once(snapshot: Snapshot, files: DiscoveredFiles, namespace: str) -> Changes:
    """Bring `discovered/` in step with the services in `snapshot`."""
    found = discover(snapshot, namespace)
    changes = files.sync(snapshot, found.served, found.stale, owned)
    for path in changes.written:
        log.info("discovery: wrote %s", path)
    for path in changes.removed:
        log.info("discovery: removed %s (its service port is gone)", path)
    return changes


async def run(folder: Path, namespace: str, *, once: bool = False) -> None:
    """Follow the folder and keep its discovered upstreams current (`once`: a single pass)."""
    store = DirectoryStore(folder, read_workers=True)
    files = DiscoveredFiles(folder)
    if once:
        sync_once(store.scan(), files, namespace)
        return
    log.info("discovery: watching %s, writing upstreams to %s", folder, files.folder)
    retry: asyncio.Task[None] | None = None
    async for snapshot in store.watch():
        if sync_once(snapshot, files, namespace).failed and (retry is None or retry.done()):
            retry = asyncio.create_task(_retry_failed_writes(store, files, namespace))


#: How often writes that failed (disk full) are tried again while the folder is quiet.
RETRY_SECONDS = 2.0


async def _retry_failed_writes(
    store: DirectoryStore, files: DiscoveredFiles, namespace: str
) -> None:
    """Freeing space outside the folder makes no event in it: keep trying until it works."""
    while True:
        await asyncio.sleep(RETRY_SECONDS)
        if not sync_once(store.scan(), files, namespace).failed:
            log.info("discovery: the files that could not be written are written now")
            return
