"""A real control plane (folder store, translator, xDS cache) over a folder of manifests,
translated once, and the admin app (console included) in process: the console's pages are
rendered from exactly what `gw up` would hold. No proxy connects (the e2e tests add one)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gw.admin.server import build_app
from gw.console.options import ConsoleOptions
from gw.controlplane import ControlPlane
from gw.store.directory import DirectoryStore
from gw.xds.cache import SnapshotCache
from gw.xds.identity import NodePolicy
from gw.xds.server import AdsServer
from tests.support.console_site import HOSTILE, secure, shop
from tests.support.tokens import SigningKey


@dataclass
class Console:
    client: httpx.AsyncClient
    controlplane: ControlPlane
    folder: Path

    async def page(self, path: str, **kwargs: object) -> httpx.Response:
        response = await self.client.get("/console/" + path, **kwargs)  # type: ignore[arg-type]
        assert response.status_code == 200, response.text
        return response


async def start(
    folder: Path, options: ConsoleOptions | None = None
) -> tuple[ControlPlane, httpx.AsyncClient]:
    store = DirectoryStore(folder)
    cache = SnapshotCache()
    controlplane = ControlPlane(store, cache)
    await controlplane.apply(store.scan())
    app = build_app(controlplane, AdsServer(cache, NodePolicy("gw-system")), console=options)
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://console.test"
    )
    return controlplane, client


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    (tmp_path / "shop.yaml").write_text(shop(9))
    (tmp_path / "secure.yaml").write_text(secure(SigningKey().public_pem()))
    (tmp_path / "hostile.yaml").write_text(HOSTILE)
    (tmp_path / "broken.yaml").write_text("kind: [\n")
    controlplane, client = await start(tmp_path)
    async with client:
        yield Console(client, controlplane, tmp_path)
