"""Faults: the control plane killed, the extauth server killed, files in the folder that
cannot be read. Each time nothing crashes, the error names what failed, and what worked
keeps working. Real processes throughout: `gw controlplane` + `gw proxy` (Envoy) as separate
processes, `gw up` with a separate `gw extauth`, `gw echo` upstreams.

Covered elsewhere (docs/reliability.md lists them): Envoy killed (tests/e2e/test_routing.py,
test_orch.py), Redis down (test_extauth.py), identity provider down (test_extauth.py), remote
JWKS down (test_jwt.py), a file that no longer parses (test_routing.py). The disk-full case
is in test_disk_full.py.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.extauth_manifests import auth_config, extauth_backends, protected_app
from tests.support.files import save
from tests.support.manifests import upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import ControlPlane, Echo, GwUp, Process, gw_command, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


def kill_hard(process: Process) -> None:
    """SIGKILL the whole process group: no shutdown code runs (a crash, an OOM kill)."""
    os.killpg(process.popen.pid, signal.SIGKILL)
    process.popen.wait(10)
    process.stop()  # reaped already: only closes its log


def children(pid: int) -> list[int]:
    """The processes `pid` started (`gw proxy` starts one: Envoy)."""
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def answered_by(url: str, host: str) -> str:
    response = httpx.get(url + "/", headers={"host": host}, timeout=5)
    return str(response.headers.get("x-echo-name", f"status {response.status_code}"))


# --- the control plane killed ---------------------------------------------------------------


def test_killed_control_plane_envoy_serves_on_and_picks_up_changes_made_meanwhile(
    tmp_path: Path,
) -> None:
    one, two = Echo(tmp_path, "one"), Echo(tmp_path, "two")
    folder = tmp_path / "config"
    folder.mkdir()
    save(folder / "up.yaml", upstream("one", one.port) + "---" + upstream("two", two.port))
    save(folder / "a.yaml", virtual_service("a", "a.test", "one"))
    plane = ControlPlane(folder, tmp_path)
    admin_port = free_port()
    proxy = Process(
        gw_command(
            "proxy",
            "--xds",
            f"127.0.0.1:{plane.xds_port}",
            "--admin-port",
            str(admin_port),
            "--concurrency",
            "1",
        ),  # fmt: skip
        gw_env(tmp_path / "home"),
        tmp_path / "proxy.log",
    )
    url = f"http://127.0.0.1:{plane.http_port}"
    try:
        wait_until(lambda: answered_by(url, "a.test") == "one", what="the first config")
        envoy = children(proxy.popen.pid)
        assert len(envoy) == 1
        kill_hard(plane.process)

        # Envoy keeps the last config: every request is served while nobody answers xDS.
        assert [answered_by(url, "a.test") for _ in range(20)] == ["one"] * 20
        save(folder / "a.yaml", virtual_service("a", "a.test", "two"))
        save(folder / "b.yaml", virtual_service("b", "b.test", "one"))
        assert [answered_by(url, "a.test") for _ in range(5)] == ["one"] * 5

        plane.start()
        wait_until(lambda: answered_by(url, "a.test") == "two", what="the edit made meanwhile")
        assert answered_by(url, "b.test") == "one"
        assert proxy.alive(), proxy.output()
        assert children(proxy.popen.pid) == envoy  # the same Envoy all along
    finally:
        proxy.stop()
        plane.process.stop()
        one.stop()
        two.stop()


# --- the extauth server killed; unreadable files --------------------------------------------


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`gw up` with the extauth server as its own process (the orchestrator deployment); the
    identity provider is a closed port, so the server answers `503 identity provider
    unavailable`: proof that a request reached it."""
    work = tmp_path_factory.mktemp("faults")
    started: list[Any] = []
    try:
        app = Echo(work, "app")
        started.append(app)
        folder = work / "config"
        folder.mkdir()
        gw = GwUp(folder, work / "home", "--extauth-port", "0")
        started.append(gw)
        extauth_port = free_port()
        save(folder / "settings.yaml", settings(status_on_error=None))
        save(
            folder / "extauth.yaml",
            extauth_backends(extauth_port, app.port, "s3cr3t-faults")
            + "---"
            + auth_config("login", "http://app.test", f"http://127.0.0.1:{free_port()}")
            + "---"
            + protected_app("app", "app.test", "login", public_prefix="/public")
            + "---"
            + upstream("open", app.port)
            + "---"
            + virtual_service("open", "open.test", "open"),
        )
        gw.wait_status("VirtualService default.app", "Accepted")
        gw.wait_status("VirtualService default.open", "Accepted")
        yield {"gw": gw, "folder": folder, "work": work, "extauth_port": extauth_port}
    finally:
        for process in reversed(started):
            process.stop()


def settings(status_on_error: int | None) -> str:
    line = f"\n    statusOnError: {status_on_error}" if status_on_error else ""
    return f"""
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extauth:
    requestTimeout: 1s
    extauthzServerRef: {{name: extauth, namespace: gw-system}}{line}
"""


def status_is(response: httpx.Response, status: int) -> httpx.Response | None:
    return response if response.status_code == status else None


def start_extauth(env: dict[str, Any]) -> Process:
    gw: GwUp = env["gw"]
    return Process(
        gw_command(
            "extauth",
            "--xds",
            f"127.0.0.1:{gw.xds_port}",
            "--bind",
            "127.0.0.1",
            "--port",
            str(env["extauth_port"]),
        ),  # fmt: skip
        gw_env(env["work"] / "home"),
        env["work"] / "extauth.log",
    )


def test_killed_extauth_server_fails_closed_and_unprotected_routes_keep_working(
    env: dict[str, Any],
) -> None:
    gw: GwUp = env["gw"]

    def private() -> httpx.Response:
        return gw.get("/private", host="app.test")

    extauth = start_extauth(env)
    try:
        # Until the server has its AuthConfigs it answers `503 auth config ... is not
        # loaded`; once it has them, the provider (absent here) is what it reports.
        wait_until(
            lambda: private().text == "identity provider unavailable", what="the extauth server"
        )
        assert private().status_code == 503
        kill_hard(extauth)

        # Fail closed: Envoy's own 403, empty body, the upstream never reached.
        closed = wait_until(lambda: status_is(private(), 403), what="403")
        assert (closed.text, closed.headers.get("x-echo-name")) == ("", None)
        assert gw.get("/public/x", host="app.test").headers["x-echo-name"] == "app"
        assert gw.get("/", host="open.test").headers["x-echo-name"] == "app"

        # statusOnError (Settings) changes the status, still empty, still closed.
        save(env["folder"] / "settings.yaml", settings(status_on_error=503))
        gw.wait_status("Settings gw-system.default", "Accepted")
        wait_until(lambda: private().status_code == 503, what="statusOnError 503")
        assert private().text == ""

        extauth = start_extauth(env)
        wait_until(lambda: private().text == "identity provider unavailable", what="extauth back")
    finally:
        extauth.stop()
        save(env["folder"] / "settings.yaml", settings(status_on_error=None))


def test_unreadable_files_are_reported_by_name_and_the_rest_keeps_serving(
    env: dict[str, Any],
) -> None:
    """Root reads any file whatever its mode bits (the suite runs as root), so "unreadable"
    is made of what root cannot read either: a FIFO (reading it would block forever), a
    dangling symbolic link, bytes that are not UTF-8, a link that loops back up the tree."""
    gw: GwUp = env["gw"]
    folder: Path = env["folder"]
    held = folder / "held.yaml"
    save(held, virtual_service("held", "held.test", "open"))
    gw.wait_status("VirtualService default.held", "Accepted")
    wait_until(lambda: gw.get("/", host="held.test").status_code == 200, what="held.test")

    held.unlink()
    os.mkfifo(held)
    (folder / "dangling.yaml").symlink_to(folder / "nowhere.yaml")
    (folder / "latin1.yaml").write_bytes("metadata: {name: caf\xe9}\n".encode("latin-1"))
    (folder / "sub").mkdir()
    (folder / "sub" / "loop").symlink_to(folder, target_is_directory=True)
    save(folder / "sub" / "new.yaml", virtual_service("new", "new.test", "open"))
    try:
        status = gw.wait_status("VirtualService default.held", "Rejected")
        assert status["reason"] == (
            "1 error occurred:\n\t* held.yaml, document 1: the file no longer parses: not a "
            "regular file (a FIFO); gw reads only regular files\n\n"
        )
        assert status["messages"] == ["its last accepted configuration is still being served"]
        errors = {e["source"]: e["message"] for e in gw.admin("/statuses")["inputErrors"]}
        assert errors == {
            "held.yaml, document 1": "the file no longer parses: not a regular file (a FIFO); "
            "gw reads only regular files",
            "dangling.yaml": "a symbolic link whose target does not exist; fix or remove the link",
            "latin1.yaml": "the file is not UTF-8 text",
        }
        gw.wait_status("VirtualService default.new", "Accepted")  # read once, not per loop
        for host in ("held.test", "new.test", "open.test"):
            assert gw.get("/", host=host).headers["x-echo-name"] == "app", host
        assert gw.process.alive()
    finally:
        for path in (held, folder / "dangling.yaml", folder / "latin1.yaml"):
            path.unlink()
        (folder / "sub" / "loop").unlink()
        (folder / "sub" / "new.yaml").unlink()
        save(held, virtual_service("held", "held.test", "open"))
    gw.wait_status("VirtualService default.held", "Accepted")
    assert gw.admin("/statuses")["inputErrors"] == []
