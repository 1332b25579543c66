"""Discovery end to end: Service + Endpoints manifests in the folder become upstreams, real
Envoy balances across the endpoints, and endpoint changes reach it as EDS updates only.

The endpoints are two `gw echo` processes (both on 127.0.0.1, told apart by port and by the
`x-echo-name` they answer with). One `gw up` serves the whole module; each test uses its
own service and host names.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.files import save as write
from tests.support.processes import Echo, GwUp, Process, gw_command, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


@dataclass
class Env:
    gw: GwUp
    folder: Path
    work: Path
    ports: dict[str, int] = field(default_factory=dict)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    work = tmp_path_factory.mktemp("discovery")
    echoes = [Echo(work, "alpha"), Echo(work, "beta")]
    folder = work / "config"
    folder.mkdir()
    try:
        gw = GwUp(folder, work / "home")
        try:
            yield Env(gw, folder, work, {e.name: e.port for e in echoes})
        finally:
            gw.stop()
    finally:
        for echo in echoes:
            echo.stop()


def service(name: str, ports: dict[str, int], endpoint_ports: list[int]) -> str:
    """A Service and its Endpoints: one subset per local echo port."""
    port_list = ", ".join(f"{{name: {n}, port: {p}}}" for n, p in ports.items())
    subsets = "".join(
        f"""
  - addresses: [{{ip: 127.0.0.1}}]
    ports: [{{name: http, port: {port}}}]"""
        for port in endpoint_ports
    )
    return f"""
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: default, labels: {{app: {name}}}}}
spec:
  selector: {{app: {name}}}
  ports: [{port_list}]
---
apiVersion: v1
kind: Endpoints
metadata: {{name: {name}, namespace: default}}
subsets:{subsets or " []"}
"""


def virtual_service(name: str, destination: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.example.com]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {destination}}}
"""


def discovered(name: str) -> str:
    return f"{{upstream: {{name: {name}, namespace: gw-system}}}}"


def names_seen(gw: GwUp, host: str, count: int = 20) -> list[str]:
    out = []
    for _ in range(count):
        response = gw.get("/", host=host)
        assert response.status_code == 200, (response.status_code, response.text)
        out.append(response.headers["x-echo-name"])
    return out


def acked_versions(gw: GwUp) -> dict[str, str]:
    connections = gw.admin("/proxies")["connections"]
    assert len(connections) == 1
    return {t.rsplit(".", 1)[-1]: v["acked"] for t, v in connections[0]["types"].items()}


def test_service_port_becomes_an_accepted_upstream_that_balances(env: Env) -> None:
    gw = env.gw
    ports = [env.ports["alpha"], env.ports["beta"]]
    write(env.folder / "web.yaml", service("web", {"http": 80}, ports))
    write(env.folder / "web-vs.yaml", virtual_service("web", discovered("default-web-80")))
    gw.wait_status("Upstream gw-system.default-web-80", "Accepted")
    upstream = next(
        r for r in gw.admin("/snapshots/input") if r["metadata"]["name"] == "default-web-80"
    )
    assert upstream["metadata"]["namespace"] == "gw-system"
    assert upstream["metadata"]["labels"] == {"discovered_by": "orchplugin"}
    assert upstream["spec"]["orch"] == {
        "serviceName": "web",
        "serviceNamespace": "default",
        "servicePort": 80,
        "selector": {"app": "web"},
    }
    gw.wait_status("VirtualService default.web", "Accepted")
    wait_until(lambda: gw.get("/", host="web.example.com").status_code == 200, what="web route")
    seen = names_seen(gw, "web.example.com")
    assert set(seen) == {"alpha", "beta"}, seen


def test_orch_destination_routes_to_the_service_without_an_upstream(env: Env) -> None:
    gw = env.gw
    ports = [env.ports["alpha"], env.ports["beta"]]
    write(env.folder / "direct.yaml", service("direct", {"http": 8080}, ports))
    destination = "{orch: {ref: {name: direct, namespace: default, port: 8080}}}"
    write(env.folder / "direct-vs.yaml", virtual_service("direct", destination))
    gw.wait_status("VirtualService default.direct", "Accepted")
    wait_until(lambda: gw.get("/", host="direct.example.com").status_code == 200, what="orch route")
    assert set(names_seen(gw, "direct.example.com")) == {"alpha", "beta"}
    clusters = gw.admin("/snapshots/xds")["gw-system~gateway-proxy"]["clusters"]
    assert "orch-svc_default-direct-8080_default" in [c["name"] for c in clusters]


class ClientLoop:
    """Requests through the gateway, back to back, from a thread, until stopped."""

    def __init__(self, gw: GwUp, host: str) -> None:
        self.gw, self.host = gw, host
        self.results: list[tuple[int, str]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ClientLoop:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        with httpx.Client(base_url=self.gw.url, headers={"host": self.host}, timeout=5) as client:
            while not self._stop.is_set():
                try:
                    response = client.get("/")
                    self.results.append(
                        (response.status_code, response.headers.get("x-echo-name", ""))
                    )
                except httpx.HTTPError as exc:
                    self.errors.append(repr(exc))

    def last(self, count: int) -> list[tuple[int, str]]:
        return self.results[-count:]


def test_removing_an_endpoint_is_an_eds_update_that_fails_no_request(env: Env) -> None:
    gw = env.gw
    alpha, beta = env.ports["alpha"], env.ports["beta"]
    write(env.folder / "shop.yaml", service("shop", {"http": 80}, [alpha, beta]))
    write(env.folder / "shop-vs.yaml", virtual_service("shop", discovered("default-shop-80")))
    gw.wait_status("VirtualService default.shop", "Accepted")
    wait_until(lambda: gw.get("/", host="shop.example.com").status_code == 200, what="shop")
    assert set(names_seen(gw, "shop.example.com")) == {"alpha", "beta"}
    before = acked_versions(gw)
    cds = gw.envoy_stat("cluster_manager.cds.update_success")
    lds = gw.envoy_stat("listener_manager.lds.update_success")
    eds = gw.envoy_stat("cluster.default-shop-80_gw-system.update_success")

    with ClientLoop(gw, "shop.example.com") as loop:
        wait_until(lambda: len(loop.results) >= 50, what="requests before the change")
        changed_at = len(loop.results)
        write(env.folder / "shop.yaml", service("shop", {"http": 80}, [alpha]))
        wait_until(
            lambda: (
                len(loop.results) > changed_at + 50
                and {name for _, name in loop.last(50)} == {"alpha"}
            ),
            what="beta to leave the rotation",
        )
        wait_until(lambda: len(loop.results) > changed_at + 100, what="requests after the change")

    assert loop.errors == []
    assert [r for r in loop.results if r[0] != 200] == []
    assert {name for _, name in loop.results[:changed_at]} == {"alpha", "beta"}
    assert {name for _, name in loop.last(50)} == {"alpha"}
    after = acked_versions(gw)
    assert after["ClusterLoadAssignment"] != before["ClusterLoadAssignment"]
    for unchanged in ("Cluster", "Listener", "RouteConfiguration"):
        assert after[unchanged] == before[unchanged], unchanged
    assert gw.envoy_stat("cluster_manager.cds.update_success") == cds
    assert gw.envoy_stat("listener_manager.lds.update_success") == lds
    assert gw.envoy_stat("cluster.default-shop-80_gw-system.update_success") > eds


def test_deleting_the_service_removes_the_upstream_and_the_route_dangles(env: Env) -> None:
    gw = env.gw
    write(env.folder / "gone.yaml", service("gone", {"http": 80}, [env.ports["alpha"]]))
    write(env.folder / "gone-vs.yaml", virtual_service("gone", discovered("default-gone-80")))
    gw.wait_status("Upstream gw-system.default-gone-80", "Accepted")
    gw.wait_status("VirtualService default.gone", "Accepted")
    wait_until(lambda: gw.get("/", host="gone.example.com").status_code == 200, what="gone")

    (env.folder / "gone.yaml").unlink()
    wait_until(
        lambda: gw.status("Upstream gw-system.default-gone-80") is None, what="upstream removal"
    )
    status = gw.wait_status("VirtualService default.gone", "Warning")
    assert status["reason"] == (
        "warning: \n  spec.virtualHost.routes[0].routeAction.single.upstream: Route Warning: "
        "InvalidDestinationWarning. Reason: *v1.Upstream { gw-system.default-gone-80 } not found"
    )
    wait_until(lambda: gw.get("/", host="gone.example.com").status_code == 503, what="503")


def test_gw_discovery_process_writes_files_and_leaves_edited_ones(env: Env) -> None:
    """`gw discovery --dir` beside the control plane: the files it writes are served; one
    edited by hand is served as edited and never overwritten, even when its service changes."""
    gw, folder = env.gw, env.folder
    alpha, beta = env.ports["alpha"], env.ports["beta"]
    write(folder / "api.yaml", service("api", {"http": 80}, [alpha, beta]))
    write(folder / "api-vs.yaml", virtual_service("api", discovered("default-api-80")))
    process = Process(
        gw_command("discovery", "--dir", str(folder)),
        gw_env(env.work / "home"),
        env.work / "discovery.log",
    )
    try:
        file_80 = folder / "discovered" / "default-api-80.yaml"
        wait_until(file_80.exists, what=f"{file_80} to be written")
        manifest = yaml.safe_load(file_80.read_text())
        assert manifest["metadata"]["labels"] == {"discovered_by": "orchplugin"}
        assert "discovery.vendor.io/generated-hash" in manifest["metadata"]["annotations"]
        assert manifest["spec"]["orch"]["serviceName"] == "api"
        gw.wait_status("Upstream gw-system.default-api-80", "Accepted")
        wait_until(
            lambda: set(names_seen(gw, "api.example.com", 10)) == {"alpha", "beta"},
            what="the discovered upstream to serve both endpoints",
        )

        # Edit by hand: send everything to beta. The edit is served, not overwritten.
        manifest["spec"] = {"static": {"hosts": [{"addr": "127.0.0.1", "port": beta}]}}
        write(file_80, yaml.safe_dump(manifest))
        edited = file_80.read_text()
        wait_until(
            lambda: set(names_seen(gw, "api.example.com", 10)) == {"beta"},
            what="the hand-edited upstream to be served",
        )

        # The service changes: the new port gets its file, the edited file stays as it is.
        write(folder / "api.yaml", service("api", {"http": 80, "admin": 81}, [alpha, beta]))
        file_81 = folder / "discovered" / "default-api-81.yaml"
        wait_until(file_81.exists, what=f"{file_81} to be written")
        gw.wait_status("Upstream gw-system.default-api-81", "Accepted")
        assert file_80.read_text() == edited

        # The service goes: its unedited upstream goes too; the edited one is the user's.
        (folder / "api.yaml").unlink()
        wait_until(lambda: not file_81.exists(), what=f"{file_81} to be removed")
        wait_until(
            lambda: gw.status("Upstream gw-system.default-api-81") is None,
            what="the upstream of the removed port to go",
        )
        assert file_80.read_text() == edited
        assert gw.status("Upstream gw-system.default-api-80")["state"] == "Accepted"
        assert set(names_seen(gw, "api.example.com", 4)) == {"beta"}
        assert process.alive()
    finally:
        process.stop()
