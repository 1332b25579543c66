"""Programs run as child processes and kept running: Envoy (`gw.proxy.supervisor`), and
under `gw up` the extauth and rate-limit servers (`ComponentProcess`).

A child that exits is started again with back-off (0.5 s doubling to 10 s; back to 0.5 s
once it ran 30 s); it is stopped with SIGTERM, then SIGKILL. Linux ends a child whose
parent dies, even by SIGKILL, so no orphan keeps holding ports.

Why the extauth and rate-limit servers are processes of their own under `gw up`: they
answer Envoy on the request path, and must answer while the control plane works through
a large or hostile folder, whose reading and translating hold Python's interpreter lock
for seconds at a time (docs/architecture.md, Processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from gw.supervision import Backoff, supervise

log = logging.getLogger(__name__)


def _die_with_parent(parent: int) -> Callable[[], None]:
    """For the child, before exec: ask Linux to SIGTERM it when its parent dies, even by
    SIGKILL, so that no orphan keeps holding ports. A parent that died between fork and
    this request cannot signal anymore: then the child exits at once."""

    def in_child() -> None:
        if sys.platform.startswith("linux"):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
            if os.getppid() != parent:
                os._exit(1)

    return in_child


class ChildProcess:
    """A program kept running as a child: started again with back-off when it exits,
    stopped with SIGTERM (SIGKILL after a timeout). Its output goes to `log_path`."""

    BACKOFF = Backoff(first=0.5, most=10.0, stable=30.0)

    def __init__(
        self, name: str, log_path: Path | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.name = name
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.process: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self._stopping = False
        self._stop_event = asyncio.Event()

    def command(self) -> list[str]:
        raise NotImplementedError

    async def spawn(self) -> asyncio.subprocess.Process:
        """Start one instance (the back-off loop of `run()` waits for it)."""
        log_file = None
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log_file = open(self.log_path, "ab")  # noqa: SIM115 (closed below)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.command(),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file or None,
                stderr=log_file or None,
                env=self.env,
                start_new_session=True,
                preexec_fn=_die_with_parent(os.getpid()),
            )
        finally:
            if log_file is not None:
                log_file.close()  # the child has its own copy
        log.info("%s started (pid %s)", self.name, self.process.pid)
        return self.process

    async def run(self) -> None:
        """Keep the program running until `stop()`."""
        delay = self.BACKOFF.first
        while not self._stopping:
            started = time.monotonic()
            process = self.process
            if process is None or process.returncode is not None:
                process = await self.spawn()
            code = await process.wait()
            if self._stopping:
                return
            lived = time.monotonic() - started
            delay = self.BACKOFF.next(delay, lived) if self.restarts else delay
            log.error(
                "%s exited with status %s after %.1fs; restarting in %.1fs",
                self.name,
                code,
                lived,
                delay,
            )
            self.restarts += 1
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop_event.wait(), delay)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

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


class ComponentProcess(ChildProcess):
    """A gw component (`gw extauth`, `gw ratelimit`) as a child process, and as a
    `gw.lifecycle.Server`: `start()` returns once it accepts connections on
    `host:port`, and raises when it exits first (a port taken) or takes longer than
    `START_TIMEOUT`; afterwards it is restarted whenever it exits.

    It logs to `log_file` itself (`--log-file`), and its warnings reach this process's
    stderr, which it shares: a `gw up` terminal shows them as its own."""

    START_TIMEOUT = 60.0

    def __init__(
        self,
        name: str,
        args: Sequence[str],
        host: str,
        port: int,
        log_file: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(name, None, env)
        self.log_file = log_file
        self.args = [*args, *(["--log-file", str(log_file)] if log_file else [])]
        self.host = host
        self.port = port
        self._task: asyncio.Task[None] | None = None

    def command(self) -> list[str]:
        return [sys.executable, "-m", "gw", *self.args]

    async def start(self) -> None:
        # A port already taken would answer the readiness probe for the child: refuse it
        # first (the child, which does not share ports, would fail to bind anyway).
        _check_free(self.host, self.port, self.name)
        process = await self.spawn()
        deadline = time.monotonic() + self.START_TIMEOUT
        while not await _accepts(self.host, self.port):
            if process.returncode is not None:
                raise OSError(
                    f"{self.name} exited with status {process.returncode}: {self._tail()}"
                )
            if time.monotonic() > deadline:
                await self.stop()
                raise OSError(f"{self.name} did not listen on {self.host}:{self.port} in time")
            await asyncio.sleep(0.05)
        # Supervised: a failure to start it again (no memory, no file handles) is retried too.
        self._task = asyncio.create_task(
            supervise(self.name, self.run, stopping=lambda: self._stopping), name=self.name
        )

    async def wait(self) -> None:
        assert self._task is not None, "wait() before start()"
        await asyncio.shield(self._task)

    async def stop(self, timeout: float = 5.0) -> None:
        await super().stop(timeout)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _tail(self) -> str:
        """Why it could not start: the last line of its log, else where its errors went."""
        if self.log_file is not None and self.log_file.exists():
            lines = self.log_file.read_text(errors="replace").strip().splitlines()
            if lines:
                return lines[-1]
        return "its errors went to this process's stderr"


def _check_free(host: str, port: int, name: str) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise OSError(f"cannot listen for {name} on {host}:{port}: {exc.strerror}") from None


async def _accepts(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection(host, port)
    except OSError:
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
