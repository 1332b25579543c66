"""Bugs in the control plane's long-running parts are loud, visible and survived.

The control plane runs in this process (the servers `gw controlplane --dir` runs: xDS, the
debug server, the loop over a real folder), and `gwctl` runs as a subprocess against its
debug server, as a user runs it. The fault is injected with monkeypatch, because it stands
for a bug: the inputs that used to trigger these (a JSON file nested 2000 deep ended the
folder watcher) are fixed and are covered as inputs by test_hostile_manifests.py and by
tests/e2e/test_routing.py. Nothing in the product is there for the test.

- a crash of the folder watcher is logged with its traceback, listed by `/tasks`, makes
  `gwctl check` fail on its `Tasks` line, and the watcher starts again: edits made after
  the crash are applied;
- a translator exception leaves the last good configuration served, marks every Proxy
  `Rejected` naming the exception (`gwctl get proxy`, `gwctl check`), and clears once a
  translation succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from envoy.config.route.v3 import route_pb2

from gw import controlplane as controlplane_module
from gw import supervision
from gw.controlplane import ControlPlane
from gw.servers import ControlPlaneServers, Serving, controlplane_servers
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from tests.support.gwctl import gwctl
from tests.support.ports import free_port
from tests.support.wait import eventually

VS = """apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.example.com]
    routes: [{{matchers: [{{prefix: /}}], directResponseAction: {{status: 200, body: {name}}}}}]
"""

ROUTES = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"


@dataclass
class Plane:
    folder: Path
    servers: ControlPlaneServers
    admin_url: str
    home: Path

    @property
    def controlplane(self) -> ControlPlane:
        return self.servers.controlplane

    def served_domains(self) -> set[str]:
        """The domains the xDS server serves the default proxy now."""
        snapshot = self.servers.controlplane.cache.get("gw-system~gateway-proxy")
        assert snapshot is not None
        domains = set()
        for _, entry in snapshot.select(ROUTES, None):
            routes = route_pb2.RouteConfiguration()
            entry.resource.Unpack(routes)
            # Envoy's domains also carry a `:*` variant of each (any port): the hosts only.
            domains |= {d for vh in routes.virtual_hosts for d in vh.domains if ":" not in d}
        return domains

    async def admin(self, path: str) -> Any:
        async with httpx.AsyncClient() as client:
            response = await client.get(self.admin_url + path, timeout=5)
        return response.json()["data"]

    async def gwctl(self, *args: str) -> Any:
        """`gwctl ARGS --admin-url ...` in a thread: this event loop serves its requests."""
        return await asyncio.to_thread(gwctl, self.home, *args, "--admin-url", self.admin_url)


@pytest.fixture
async def plane(tmp_path: Path) -> AsyncIterator[Plane]:
    supervision.TASKS.tasks.clear()
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "good.yaml").write_text(VS.format(name="good"))
    debug_port = free_port()
    serving = Serving(bind="127.0.0.1", xds_port=free_port(), debug_port=debug_port)
    servers = controlplane_servers(folder, Options(), serving)
    started = []
    try:
        for server in servers.servers:
            await server.start()
            started.append(server)
        await eventually(servers.controlplane.ready.is_set, what="the first translation")
        yield Plane(folder, servers, f"http://127.0.0.1:{debug_port}", tmp_path / "home")
    finally:
        for server in reversed(started):
            await server.stop()
        supervision.TASKS.tasks.clear()


async def test_a_crashed_folder_watcher_is_reported_and_restarted(
    plane: Plane, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    assert plane.served_domains() == {"good.example.com"}
    scan = DirectoryStore.scan
    crashes = []

    def crash_once(store: DirectoryStore, *args: Any, **kwargs: Any) -> Any:
        if not crashes:
            crashes.append(1)
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")
        return scan(store, *args, **kwargs)

    monkeypatch.setattr(DirectoryStore, "scan", crash_once)
    (plane.folder / "later.yaml").write_text(VS.format(name="later"))

    # The watcher starts again, reads the folder and the edit goes live.
    await eventually(lambda: "later.example.com" in plane.served_domains(), what="the edit")
    assert crashes == [1]
    (record,) = [r for r in caplog.records if r.getMessage().startswith("store crashed")]
    assert record.levelno == logging.ERROR and record.exc_info is not None

    tasks = {t["name"]: t for t in await plane.admin("/tasks")}
    store = tasks["store"]
    assert (store["state"], store["healthy"], store["crashes"]) == ("running", False, 1)
    assert store["lastCrash"]["error"].startswith("RecursionError: maximum recursion depth")
    assert "Traceback" in store["lastCrash"]["traceback"]
    assert tasks["translation"]["healthy"] and tasks["controlplane"]["healthy"]
    async with httpx.AsyncClient() as client:
        assert "/tasks" in (await client.get(plane.admin_url + "/", timeout=5)).text

    checked = await plane.gwctl("check", "-x", "proxies")  # no Envoy in this test
    assert checked.returncode == 1
    assert "Checking Tasks... 1 Errors!" in checked.stdout
    assert (
        "Task store of the control plane crashed once (last " in checked.stderr
        and "RecursionError: maximum recursion depth exceeded" in checked.stderr
        and "running again" in checked.stderr
    )


async def test_a_translator_exception_is_on_the_proxy_and_the_last_good_config_serves(
    plane: Plane, monkeypatch: pytest.MonkeyPatch
) -> None:
    translate = controlplane_module.translate

    def broken(snapshot: Any, *args: Any, **kwargs: Any) -> Any:
        """A translator bug that one resource triggers."""
        if any(key.name == "trigger" for key in snapshot.resources):
            raise KeyError("trigger")
        return translate(snapshot, *args, **kwargs)

    monkeypatch.setattr(controlplane_module, "translate", broken)
    (plane.folder / "trigger.yaml").write_text(VS.format(name="trigger"))
    failures = plane.controlplane.translation.failures
    await eventually(lambda: plane.controlplane.translation.failures > failures, what="failure")

    assert plane.served_domains() == {"good.example.com"}  # the last good configuration
    listed = await plane.gwctl("get", "proxy", "-o", "yaml")
    assert listed.returncode == 0, listed.stderr
    proxy = yaml.safe_load(listed.stdout)  # one Proxy: printed as one document
    status = proxy["status"]["statuses"]["gw-system"]
    assert status["state"] == "Rejected"
    assert re.fullmatch(
        r"1 error occurred:\n\t\* the last translation failed \(KeyError: 'trigger'\): a bug "
        r"in gw; the configuration translated at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ keeps "
        r"serving\. The control plane's log has the traceback\n\n",
        status["reason"],
    ), status["reason"]
    (listener,) = proxy["spec"]["listeners"]  # the Proxy as last translated
    assert [vh["domains"] for vh in listener["httpListener"]["virtualHosts"]] == [
        ["good.example.com", "good.example.com:*"]
    ]
    table = await plane.gwctl("get", "proxy")
    assert "Rejected" in table.stdout
    checked = await plane.gwctl("check")
    assert checked.returncode == 1 and "Checking Proxies... " in checked.stdout
    assert "Found rejected proxy: gw-system gateway-proxy: the last translation failed" in (
        checked.stderr
    )

    (plane.folder / "trigger.yaml").unlink()  # the next translation works: the Proxy clears
    await eventually(lambda: plane.controlplane.translation.error is None, what="a translation")
    proxy = yaml.safe_load((await plane.gwctl("get", "proxy", "-o", "yaml")).stdout)
    assert proxy["status"]["statuses"]["gw-system"]["state"] == "Accepted"
