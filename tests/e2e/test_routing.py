"""Foundation end to end: `gw up` on a folder, real Envoy, real HTTP through the proxy.

Upstreams are `gw echo` processes; each answers with its name, so a response shows which
upstream the gateway chose.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


def upstream(name: str, port: int) -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: gw-system}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {port}}}]
"""


def virtual_service(name: str, domains: list[str], routes: list[tuple[str, str]]) -> str:
    route_yaml = "".join(
        f"""
      - matchers: [{{prefix: {prefix}}}]
        routeAction: {{single: {{upstream: {{name: {target}, namespace: gw-system}}}}}}"""
        for prefix, target in routes
    )
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: {domains}
    routes:{route_yaml}
"""


def echo_name(response: httpx.Response) -> str:
    assert response.status_code == 200, (response.status_code, response.text)
    return str(response.headers["x-echo-name"])


@pytest.fixture
def setup(tmp_path: Path, echo_factory: Any, gw_up_factory: Any) -> dict[str, Any]:
    alpha, beta = echo_factory("alpha"), echo_factory("beta")
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "upstreams.yaml").write_text(
        upstream("alpha", alpha.port) + "---" + upstream("beta", beta.port)
    )
    (folder / "shop.yaml").write_text(
        virtual_service("shop", ["shop.example.com"], [("/beta", "beta"), ("/", "alpha")])
    )
    (folder / "api.yaml").write_text(virtual_service("api", ["api.example.com"], [("/", "beta")]))
    gw = gw_up_factory(folder)
    return {"gw": gw, "folder": folder}


def test_routes_by_host_and_prefix_in_declared_order(setup: dict[str, Any]) -> None:
    gw = setup["gw"]
    assert echo_name(gw.get("/anything", host="shop.example.com")) == "alpha"
    assert echo_name(gw.get("/beta/x", host="shop.example.com")) == "beta"
    assert echo_name(gw.get("/", host="api.example.com")) == "beta"
    body = gw.get("/beta/x?q=1", host="shop.example.com", headers={"x-test": "1"}).json()
    assert body["path"] == "/beta/x" and body["query"] == "q=1"
    assert body["headers"]["x-test"] == "1"
    assert gw.status("VirtualService default.shop")["state"] == "Accepted"
    assert gw.status("Upstream gw-system.alpha")["state"] == "Accepted"


def test_unknown_host_gets_404(setup: dict[str, Any]) -> None:
    response = setup["gw"].get("/", host="nobody.example.com")
    assert response.status_code == 404
    assert response.content == b""


def test_edit_changes_routing_without_restarting_envoy(setup: dict[str, Any]) -> None:
    gw, folder = setup["gw"], setup["folder"]
    before = gw.envoy_stat("server.uptime")
    pid_before = httpx.get(gw.proxy_admin_url + "/server_info", timeout=5).json()[
        "command_line_options"
    ]
    (folder / "api.yaml").write_text(virtual_service("api", ["api.example.com"], [("/", "alpha")]))
    wait_until(
        lambda: echo_name(gw.get("/", host="api.example.com")) == "alpha",
        what="the edited route to answer",
    )
    assert gw.envoy_stat("server.uptime") >= before
    assert gw.envoy_stat("listener_manager.lds.update_rejected") == 0
    assert (
        httpx.get(gw.proxy_admin_url + "/server_info", timeout=5).json()["command_line_options"]
        == pid_before
    )
    assert gw.process.alive()


def test_editor_atomic_save_and_rename(setup: dict[str, Any]) -> None:
    """Editors write a temporary file and rename it over the original."""
    gw, folder = setup["gw"], setup["folder"]
    tmp = folder / ".api.yaml.swp"
    tmp.write_text(virtual_service("api", ["api.example.com"], [("/", "alpha")]))
    os.replace(tmp, folder / "api.yaml")
    wait_until(
        lambda: echo_name(gw.get("/", host="api.example.com")) == "alpha",
        what="the atomically saved route",
    )
    (folder / "api.yaml").rename(folder / "renamed.yml")
    wait_until(
        lambda: (
            gw.get("/", host="api.example.com").status_code == 200
            and "renamed.yml" in str(gw.admin("/statuses"))
        ),
        what="the renamed file",
    )
    assert echo_name(gw.get("/", host="api.example.com")) == "alpha"


def test_broken_file_keeps_old_config_and_rejects(setup: dict[str, Any]) -> None:
    gw, folder = setup["gw"], setup["folder"]
    (folder / "shop.yaml").write_text("apiVersion: gateway.vendor.io/v1\nkind: [oops\n")
    status = gw.wait_status("VirtualService default.shop", "Rejected")
    assert "shop.yaml" in status["reason"] and "invalid YAML" in status["reason"]
    assert status["messages"] == ["its last accepted configuration is still being served"]
    assert echo_name(gw.get("/x", host="shop.example.com")) == "alpha"
    assert echo_name(gw.get("/", host="api.example.com")) == "beta"

    # A typo in a field: the same, naming the field.
    (folder / "shop.yaml").write_text(
        virtual_service("shop", ["shop.example.com"], [("/", "beta")]).replace("prefix", "prefx")
    )
    wait_until(
        lambda: "prefx: unknown field" in gw.status("VirtualService default.shop")["reason"],
        what="the unknown-field status",
    )
    assert echo_name(gw.get("/x", host="shop.example.com")) == "alpha"

    # Fixed: the new version serves.
    (folder / "shop.yaml").write_text(
        virtual_service("shop", ["shop.example.com"], [("/", "beta")])
    )
    gw.wait_status("VirtualService default.shop", "Accepted")
    wait_until(
        lambda: echo_name(gw.get("/x", host="shop.example.com")) == "beta", what="the fixed route"
    )


def test_deleting_a_file_removes_its_routes(setup: dict[str, Any]) -> None:
    gw, folder = setup["gw"], setup["folder"]
    (folder / "api.yaml").unlink()
    wait_until(
        lambda: gw.get("/", host="api.example.com").status_code == 404,
        what="the deleted host to 404",
    )
    assert gw.status("VirtualService default.api") is None
    assert echo_name(gw.get("/", host="shop.example.com")) == "alpha"


def test_new_conflicting_domain_does_not_take_live_routes(setup: dict[str, Any]) -> None:
    gw, folder = setup["gw"], setup["folder"]
    (folder / "intruder.yaml").write_text(
        virtual_service("intruder", ["shop.example.com"], [("/", "beta")])
    )
    status = gw.wait_status("VirtualService default.intruder", "Rejected")
    assert "domain conflict" in status["reason"]
    assert echo_name(gw.get("/x", host="shop.example.com")) == "alpha"


def test_most_specific_domain_wins_over_catch_all(setup: dict[str, Any]) -> None:
    gw, folder = setup["gw"], setup["folder"]
    (folder / "catchall.yaml").write_text(virtual_service("catchall", ["*"], [("/", "beta")]))
    wait_until(
        lambda: echo_name(gw.get("/", host="anything.example.com")) == "beta",
        what="the catch-all host",
    )
    assert echo_name(gw.get("/x", host="shop.example.com")) == "alpha"  # exact beats *
    assert echo_name(gw.get("/x", host="shop.example.com:1234")) == "alpha"  # any port too


def test_envoy_is_restarted_when_it_dies_and_stopped_with_gw(setup: dict[str, Any]) -> None:
    """`gw up` supervises Envoy: a killed Envoy comes back with the current config; Ctrl-C
    stops it along with everything else."""
    gw = setup["gw"]
    (first,) = _envoys_of(gw.process.popen.pid)
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: _envoys_of(gw.process.popen.pid) not in ([], [first]), what="a new envoy")
    wait_until(
        lambda: echo_name(gw.get("/x", host="shop.example.com")) == "alpha",
        timeout=30,
        what="traffic through the restarted envoy",
    )
    (second,) = _envoys_of(gw.process.popen.pid)
    gw.stop()
    assert gw.process.popen.returncode == 0
    wait_until(
        lambda: not Path(f"/proc/{second}").exists() or _zombie(second),
        what="envoy to stop with gw up",
    )


def _envoys_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    found = []
    for child in children.read_text().split() if children.exists() else []:
        cmdline = Path(f"/proc/{child}/cmdline")
        if cmdline.exists() and b"envoy" in cmdline.read_bytes().split(b"\0")[0]:
            found.append(int(child))
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
