"""Envoy's supervisor: Envoy never outlives a supervisor that was killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

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


def test_envoy_dies_when_its_supervisor_is_killed(tmp_path: Path) -> None:
    admin = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    supervisor = subprocess.Popen(
        [sys.executable, "-c", SUPERVISE, str(free_port()), str(admin), str(tmp_path)], env=env
    )
    try:
        info = wait_until(
            lambda: httpx.get(f"http://127.0.0.1:{admin}/server_info", timeout=1).json(),
            what="envoy's admin interface",
        )
        assert info["command_line_options"]["service_node"] == "t"
    finally:
        supervisor.send_signal(signal.SIGKILL)
        supervisor.wait()

    def admin_gone() -> bool:
        try:
            httpx.get(f"http://127.0.0.1:{admin}/ready", timeout=0.5)
        except httpx.HTTPError:
            return True
        return False

    wait_until(admin_gone, timeout=10, what="envoy to exit after its supervisor was killed")
