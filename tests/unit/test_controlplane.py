"""The control plane loop: garbage collection kept off the path of a change must not keep
replaced configurations alive; each proxy is published; the next translation's cache is made
after publishing; stopping waits for no translation."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from pathlib import Path
from typing import Any

import pytest

from gw import controlplane as controlplane_module
from gw.controlplane import ControlPlane
from gw.store.directory import DirectoryStore
from gw.translator.gateway import incremental
from gw.translator.gateway.stagecache import PendingStageCache, StageCache
from gw.xds.cache import SnapshotCache

VS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: vs-{i}, namespace: default}}
spec:
  virtualHost:
    domains: [host-{i}-{version}.example.com]
    routes:
      - matchers: [{{prefix: /}}]
        directResponseAction: {{status: 200, body: "{version}"}}
"""


async def test_replaced_configurations_are_freed(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    controlplane = ControlPlane(store, SnapshotCache())

    async def apply(version: int) -> None:
        (tmp_path / "vs.yaml").write_text(
            "---".join(VS.format(i=i, version=version) for i in range(200))
        )
        await controlplane.apply(store.scan())
        controlplane._keep_configuration_out_of_collections()

    try:
        await apply(0)
        controlplane._full_collection()
        after_one = gc.get_freeze_count()
        for version in range(1, 30):
            await apply(version)
        controlplane._full_collection()
        after_many = gc.get_freeze_count()
    finally:
        gc.unfreeze()
    # Thirty configurations of 200 hosts were built; only the current one may remain.
    assert after_many < after_one * 1.2, (after_one, after_many)


GATEWAY = """
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: edge, namespace: gw-system}}
spec:
  bindPort: 9000
  proxyNames: [{proxy}]
  httpGateway: {{}}
"""


async def test_each_proxy_is_published_and_a_vanished_one_is_emptied(tmp_path: Path) -> None:
    """Each proxy's role gets its own resources; when no gateway names a proxy any more,
    its role is served an empty snapshot (its Envoys stay up with nothing to serve)."""
    store = DirectoryStore(tmp_path)
    cache = SnapshotCache()
    controlplane = ControlPlane(store, cache)
    (tmp_path / "vs.yaml").write_text(VS.format(i=0, version=0))
    (tmp_path / "gw.yaml").write_text(GATEWAY.format(proxy="edge"))
    await controlplane.apply(store.scan())
    listeners = "type.googleapis.com/envoy.config.listener.v3.Listener"
    edge, default = cache.get("gw-system~edge"), cache.get("gw-system~gateway-proxy")
    assert edge is not None and default is not None
    assert [name for name, _ in edge.select(listeners, None)] == ["listener-::-9000"]
    assert default.select(listeners, None) == []
    (tmp_path / "gw.yaml").write_text(GATEWAY.format(proxy="gateway-proxy"))
    await controlplane.apply(store.scan())
    edge, default = cache.get("gw-system~edge"), cache.get("gw-system~gateway-proxy")
    assert edge is not None and default is not None
    assert all(not entries for entries in edge.entries.values())
    assert [name for name, _ in default.select(listeners, None)] == ["listener-::-9000"]


def test_stopping_does_not_wait_for_a_translation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A control plane stopped during a translation ends without waiting for it (a Ctrl-C
    during the first translation of 100,000 VirtualServices waited seconds for a result
    nobody would use), and nothing of that translation is used once it stopped. (The
    translation is held until the test ends, which makes it as slow as a large one.)"""
    (tmp_path / "vs.yaml").write_text(VS.format(i=0, version=0))
    translating, go_on = threading.Event(), threading.Event()
    translate = controlplane_module.translate_with_gc_paused

    def held_translation(*args: Any) -> Any:
        translating.set()
        go_on.wait(20)
        return translate(*args)

    monkeypatch.setattr(controlplane_module, "translate_with_gc_paused", held_translation)

    async def stopped_while_translating() -> None:
        task = asyncio.create_task(ControlPlane(DirectoryStore(tmp_path), SnapshotCache()).run())
        assert await asyncio.to_thread(translating.wait, 10)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    try:
        asyncio.run(stopped_while_translating())
        left = [t for t in threading.enumerate() if t.name == "translation" and t.is_alive()]
        assert left, "the loop's close waited for the translation"
    finally:
        go_on.set()
        gc.unfreeze()


async def test_the_next_translation_s_cache_is_made_after_publishing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full build leaves its stage-1 cache for later (a tenth of it): the control plane
    publishes first, then makes it, so the next change finds it made."""
    store = DirectoryStore(tmp_path)
    cache = SnapshotCache()
    controlplane = ControlPlane(store, cache)
    made: list[bool] = []  # whether the configuration was published when it was made
    cache_of = incremental.cache_of

    def recorded(*args: Any) -> Any:
        made.append(cache.get("gw-system~gateway-proxy") is not None)
        return cache_of(*args)

    monkeypatch.setattr(incremental, "cache_of", recorded)
    (tmp_path / "vs.yaml").write_text(VS.format(i=0, version=0))
    result = await controlplane.apply(store.scan())
    assert result is not None and isinstance(result.cache.stage, PendingStageCache)
    assert made == [True]
    assert isinstance(result.cache.prepare(), StageCache)
    assert made == [True]  # made once


async def test_a_cache_that_cannot_be_made_costs_a_full_translation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Making the next translation's cache fails (a bug): what was published stays, and
    the next translation starts from scratch instead of failing the same way."""
    store = DirectoryStore(tmp_path)
    controlplane = ControlPlane(store, SnapshotCache())
    (tmp_path / "vs.yaml").write_text(VS.format(i=0, version=0))

    def broken(result: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(controlplane_module, "prepare_with_gc_paused", broken)
    first = await controlplane.apply(store.scan())
    assert first is not None and controlplane.ready.is_set()
    assert controlplane.result is not None and controlplane.result.cache.stage is None
    monkeypatch.undo()
    (tmp_path / "vs.yaml").write_text(VS.format(i=0, version=1))
    second = await controlplane.apply(store.scan())
    assert second is not None and second.restated is None  # a full translation
    assert controlplane.translation.failures == 0
