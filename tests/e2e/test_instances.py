"""Several `gw up` on one machine: each is an instance with a state directory of its own,
gwctl finds the one serving the current folder (or the one named), a taken port fails
`gw up` loudly, logs start afresh with each run, and `gwctl validate` says offline exactly
what the running `gw up` says about the same folder."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.gwctl import gwctl, parse_table
from tests.support.processes import GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def site(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "site.yaml").write_text(
        "apiVersion: gateway.vendor.io/v1\nkind: VirtualService\n"
        f"metadata: {{name: {body}, namespace: default}}\n"
        "spec:\n  virtualHost:\n    domains: ['*']\n    routes:\n"
        f"      - directResponseAction: {{status: 200, body: {body}}}\n"
    )
    return folder


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GwUp, GwUp, Path]]:
    root = tmp_path_factory.mktemp("instances")
    home = root / "home"
    first = GwUp(site(root / "first", "first"), home)
    try:
        second = GwUp(site(root / "second", "second"), home)
        try:
            yield first, second, home
        finally:
            second.stop()
    finally:
        first.stop()


def names(result: object) -> list[str]:
    stdout = getattr(result, "stdout", "")
    return [r["VIRTUAL SERVICE"] for r in parse_table(stdout)]


def test_each_instance_has_its_own_state_directory(two: tuple[GwUp, GwUp, Path]) -> None:
    first, second, home = two
    assert first.state_dir != second.state_dir
    for gw in (first, second):
        state = json.loads((gw.state_dir / "up.json").read_text())
        assert state["folder"] == str(gw.folder.resolve())
        assert state["adminUrl"] == gw.admin_url
        assert (gw.state_dir / "logs" / "gw.log").exists()
        assert (gw.state_dir / "proxy" / "envoy-bootstrap.json").exists()
    assert not (home / "up.json").exists()


def test_gwctl_picks_the_instance_of_the_current_folder(
    two: tuple[GwUp, GwUp, Path], tmp_path: Path
) -> None:
    first, second, home = two
    assert names(gwctl(home, "get", "vs", cwd=first.folder)) == ["first"]
    inner = second.folder / "sub"
    inner.mkdir(exist_ok=True)
    assert names(gwctl(home, "get", "vs", cwd=inner)) == ["second"]
    named = gwctl(home, "--instance", first.state_dir.name, "get", "vs", cwd=second.folder)
    assert names(named) == ["first"]
    by_env = gwctl(home, "get", "vs", cwd=tmp_path, env={"GW_INSTANCE": second.state_dir.name})
    assert names(by_env) == ["second"]
    elsewhere = gwctl(home, "get", "vs", cwd=tmp_path)
    assert elsewhere.returncode == 1
    assert elsewhere.stderr.startswith(
        f"Error: 2 gw up instances are running and none serves {tmp_path.resolve()}: choose "
        "one with --instance NAME (or GW_INSTANCE); running: "
    )
    unknown = gwctl(home, "--instance", "nope", "get", "vs")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("Error: gw up instance 'nope' is not running; running: ")


def test_a_second_gw_up_on_the_same_folder_is_refused(two: tuple[GwUp, GwUp, Path]) -> None:
    first, _, home = two
    with pytest.raises(RuntimeError) as refused:
        GwUp(first.folder, home)
    assert (
        f"gw: gw up instance '{first.state_dir.name}' is already running serving "
        f"{first.folder.resolve()}"
    ) in str(refused.value)


def test_a_taken_proxy_port_fails_gw_up(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(RuntimeError) as failed:
            GwUp(site(tmp_path / "clash", "clash"), tmp_path / "home", "--http-port", str(port))
    output = str(failed.value)
    assert (
        f"gw: listeners failed: the proxy cannot listen on 127.0.0.1:{port} (Address already "
        "in use): another process holds the port"
    ) in output
    assert "is up" not in output


def test_a_taken_proxy_admin_port_fails_gw_up_at_once(tmp_path: Path) -> None:
    """Envoy cannot start at all: gw up says why (from Envoy's log) instead of retrying."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(RuntimeError) as failed:
            GwUp(
                site(tmp_path / "admin", "admin"),
                tmp_path / "home",
                "--proxy-admin-port",
                str(port),
            )
    assert (
        f"gw: listeners failed: the proxy cannot listen on 127.0.0.1:{port} (Address already "
        "in use)"
    ) in str(failed.value)


def test_logs_start_afresh_with_each_run(tmp_path: Path) -> None:
    folder = site(tmp_path / "runs", "runs")
    home = tmp_path / "home"
    first = GwUp(folder, home)
    first_pid = json.loads((first.state_dir / "up.json").read_text())["pid"]
    first.stop()
    assert not (first.state_dir / "up.json").exists()
    second = GwUp(folder, home)
    try:
        logs = second.state_dir / "logs"
        assert (logs / "previous" / "gw.log").exists()
        assert (logs / "previous" / "gateway-proxy.log").exists()
        pid = json.loads((second.state_dir / "up.json").read_text())["pid"]
        assert pid != first_pid
        current = (logs / "gw.log").read_text()
        previous = (logs / "previous" / "gw.log").read_text()
        assert current and previous and previous not in current  # this run's lines only
    finally:
        second.stop()


def test_validate_says_what_gw_up_says_about_the_quickstart(tmp_path: Path) -> None:
    folder = tmp_path / "quickstart"
    shutil.copytree(QUICKSTART, folder)
    gw = GwUp(folder, tmp_path / "home")
    try:
        wait_until(lambda: len(gw.statuses()) >= 4, what="every quickstart status")
        live = {k: v["state"] for k, v in gw.statuses().items()}
    finally:
        gw.stop()
    offline = json.loads(gwctl(tmp_path, "validate", "-f", str(folder), "-o", "json").stdout)
    said = {f"{s['kind']} {s['namespace']}.{s['name']}": s["state"] for s in offline["statuses"]}
    assert said == live
    assert set(said.values()) == {"Accepted"}
    assert "Upstream gw-system.default-echo-80" in said  # discovered from the Service
