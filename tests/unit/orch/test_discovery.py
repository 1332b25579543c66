"""`gw discovery --orch`: Upstream custom resources for the cluster's service ports, against
the in-test API server (`tests/support/kube_api.py`), which stands in for the real one: none
can run on these machines."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gw.orch import discovery
from gw.orch.client import connect
from tests.support.kube_api import FakeKubeApi
from tests.support.wait import eventually

NS = "gw-system"
US = "gw.vendor.io/v1"


@pytest.fixture
def api() -> Iterator[FakeKubeApi]:
    with FakeKubeApi() as server:
        yield server


def service(name: str, ports: list[int]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
        "spec": {"ports": [{"port": p} for p in ports], "selector": {"app": name}},
    }


async def test_upstreams_follow_the_services(api: FakeKubeApi, tmp_path: Path) -> None:
    api.apply(service("petstore", [8080, 9090]))
    client = connect(api.kubeconfig(tmp_path / "kubeconfig"))
    task = asyncio.create_task(discovery.run(client, NS))
    try:
        made = await eventually(
            lambda: api.get(US, "Upstream", NS, "default-petstore-8080"), what="the upstream"
        )
        assert made["metadata"]["labels"] == {"discovered_by": "orchplugin"}
        assert made["spec"]["orch"] == {
            "serviceName": "petstore",
            "serviceNamespace": "default",
            "servicePort": 8080,
            "selector": {"app": "petstore"},
        }
        # an upstream edited by hand belongs to its editor from then on
        edited = await eventually(
            lambda: api.get(US, "Upstream", NS, "default-petstore-9090"), what="the second port"
        )
        edited["spec"]["orch"]["selector"] = {"app": "petstore", "version": "v2"}
        api.apply(edited)

        api.apply(service("petstore", [8080]))  # port 9090 is gone
        api.apply(service("other", [80]))
        await eventually(lambda: api.get(US, "Upstream", NS, "default-other-80"), what="new one")
        await asyncio.sleep(0.2)
        kept = api.get(US, "Upstream", NS, "default-petstore-9090")
        assert kept is not None and kept["spec"]["orch"]["selector"]["version"] == "v2"

        api.delete("v1", "Service", "default", "other")
        await eventually(
            lambda: api.get(US, "Upstream", NS, "default-other-80") is None, what="the removal"
        )
        writes = api.count("POST", "/upstreams") + api.count("PUT", "/upstreams")
        await asyncio.sleep(0.3)  # nothing left to do: nothing more is written
        assert api.count("POST", "/upstreams") + api.count("PUT", "/upstreams") == writes
        assert api.count("PATCH", "/status") == 0  # discovery never writes statuses
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()
