"""`gw.children.ComponentProcess`: a gw component as a child process, started once it
accepts connections; one that cannot start says why. Real `gw extauth` processes."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from gw.children import ComponentProcess
from tests.support.ports import free_port
from tests.support.processes import gw_env


def extauth(port: int, log: Path) -> ComponentProcess:
    args = ["extauth", "--bind", "127.0.0.1", "--port", str(port), "--xds", "127.0.0.1:1"]
    return ComponentProcess("extauth", args, "127.0.0.1", port, log, env=gw_env(log.parent))


async def test_started_once_it_listens_and_stopped(tmp_path: Path) -> None:
    port = free_port()
    child = extauth(port, tmp_path / "extauth.log")
    await child.start()
    try:
        assert child.running
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        await child.stop()
    assert not child.running and child.restarts == 0
    assert "extauth: listening on 127.0.0.1:" in (tmp_path / "extauth.log").read_text()


async def test_a_taken_port_fails_the_start_naming_why(tmp_path: Path) -> None:
    """Another server's answer on the port must not pass for the child's."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        child = extauth(port, tmp_path / "extauth.log")
        with pytest.raises(
            OSError, match=f"cannot listen for extauth on 127.0.0.1:{port}: Address already in use"
        ):
            await child.start()
        assert child.process is None  # nothing was started


async def test_a_child_that_exits_at_start_says_where_to_look(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """It fails before it could log to its file: its error is on the shared stderr."""
    child = extauth(free_port(), tmp_path / "extauth.log")
    child.args += ["--log-level", "nonsense"]
    with pytest.raises(
        OSError, match="extauth exited with status 1: its errors went to this process's stderr"
    ):
        await child.start()
    assert "unknown log level 'nonsense'" in capfd.readouterr().err
