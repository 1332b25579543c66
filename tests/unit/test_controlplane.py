"""The control plane loop's memory: garbage collection kept off the path of a change must
not keep replaced configurations alive."""

from __future__ import annotations

import gc
from pathlib import Path

from gw.controlplane import ControlPlane
from gw.store.directory import DirectoryStore
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
