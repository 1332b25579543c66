"""Envoy's supervisor: Envoy never outlives a supervisor that was killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.ports import free_port
from tests.support.wait import wait_until

SUPERVISE = """
import asyncio, sys
from pathlib import Path
from gw.proxy.bootstrap import BootstrapOptions
from gw.proxy.supervisor import EnvoySupervisor, ProxyOptions
options = ProxyOptions(bootstrap=BootstrapOptions(node_id="t", xds_port=int(sys.argv[1]),
                       admin_port=int(sys.argv[2])), workdir=Path(sys.argv[3]), concurrency=1)
asyncio.run(EnvoySupervisor(options).run())
"""


def _envoy_children(pid: int) -> list[int]:
    """Children that have exec'd Envoy (a child is listed from fork on, before its exec)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    children = [int(p) for p in path.read_text().split()] if path.exists() else []
    return [c for c in children if _program(c).endswith("envoy")]


def _program(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
    except FileNotFoundError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_envoy_dies_when_its_supervisor_is_killed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    supervisor = subprocess.Popen(
        [sys.executable, "-c", SUPERVISE, str(free_port()), str(free_port()), str(tmp_path)],
        env=env,
    )
    try:
        (envoy,) = wait_until(lambda: _envoy_children(supervisor.pid), what="envoy to start")
    finally:
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait()
    wait_until(lambda: not _alive(envoy), timeout=10, what="envoy to exit with its supervisor")
