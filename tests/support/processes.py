"""Real gw processes for end-to-end tests: `gw up` (control plane + Envoy), `gw controlplane`
alone, and echo upstreams, on free loopback ports, always stopped at the end."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from gw.instance import default_name, instance
from tests.support.ports import free_port
from tests.support.wait import wait_until

SRC = Path(__file__).resolve().parents[2] / "src"


def gw_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env["GW_HOME"] = str(home)
    env.pop("GW_ADMIN_URL", None)
    env.pop("GW_INSTANCE", None)
    return env


def gw_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "gw", *args]


class Process:
    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self._log_file = open(log, "wb")  # noqa: SIM115 (closed in stop)
        self.popen = subprocess.Popen(
            args, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        self._log_file.close()


class ControlPlane:
    """`gw controlplane --dir FOLDER` on loopback, its ports kept across restarts (`start()`
    again after a stop or a kill finds them again); `extra` arguments are added (for
    instance `--xds-certs DIR`). Ready once it has translated the folder."""

    def __init__(self, folder: Path, work: Path, *extra: str) -> None:
        self.folder, self.work, self.extra = folder, work, extra
        self.xds_port, self.debug_port, self.dev_port = free_port(), free_port(), free_port()
        self.http_port, self.https_port = free_port(), free_port()
        self.xds = f"127.0.0.1:{self.xds_port}"
        self.starts = 0
        self.process = self.start()

    def start(self) -> Process:
        env = gw_env(self.work / "home")
        env["START_STATS_SERVER"] = "true"
        self.starts += 1
        self.process = Process(
            gw_command(
                "controlplane",
                "--dir",
                str(self.folder),
                "--bind",
                "127.0.0.1",
                "--xds-port",
                str(self.xds_port),
                "--debug-port",
                str(self.debug_port),
                "--dev-port",
                str(self.dev_port),
                "--http-port",
                str(self.http_port),
                "--https-port",
                str(self.https_port),
                "--proxy-bind",
                "127.0.0.1",
                *self.extra,
            ),  # fmt: skip
            env,
            self.work / f"controlplane-{self.starts}.log",
        )
        wait_until(self._ready, timeout=30, what="the control plane")
        return self.process

    def _ready(self) -> bool:
        if not self.process.alive():
            raise RuntimeError(f"the control plane exited:\n{self.process.output()}")
        return bool(self.admin("/proxies")["translation"]["count"] > 0)

    def admin(self, path: str) -> Any:
        """A debug-server endpoint's data."""
        response = httpx.get(f"http://127.0.0.1:{self.debug_port}{path}", timeout=5)
        response.raise_for_status()
        return response.json()["data"]


class Echo:
    """`gw echo` on a free port; `name` comes back in `x-echo-name` and in the body.

    `tls_args` (e.g. `--tls-cert C --tls-key K [--tls-client-ca CA]`) makes it serve HTTPS;
    it is then ready when it accepts connections."""

    def __init__(self, workdir: Path, name: str = "echo", *tls_args: str) -> None:
        self.name = name
        self.port = free_port()
        self.process = Process(
            gw_command("echo", "--port", str(self.port), "--name", name, *tls_args),
            gw_env(workdir),
            workdir / f"echo-{name}-{self.port}.log",
        )
        wait_until(self._accepts if tls_args else self._answers, what=f"echo {name} on {self.port}")

    def _answers(self) -> bool:
        return httpx.get(f"http://127.0.0.1:{self.port}/", timeout=1).status_code == 200

    def _accepts(self) -> bool:
        if not self.process.alive():
            raise RuntimeError(f"echo {self.name} exited:\n{self.process.output()}")
        with socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True

    def stop(self) -> None:
        self.process.stop()


class GwUp:
    """`gw up FOLDER` with every port free and loopback-only; ready when Envoy is live and
    the control plane has translated the folder once."""

    def __init__(
        self,
        folder: Path,
        home: Path,
        *extra: str,
        extauth_port: int | None = None,
        ratelimit_port: int | None = None,
    ) -> None:
        self.folder = folder
        self.home = home
        #: This run's state directory (state file, logs): `gw.instance`.
        self.state_dir = instance(home, default_name(folder)).directory
        self.http_port, self.https_port, self.xds_port, self.admin_port, self.debug_port = (
            free_port(),
            free_port(),
            free_port(),
            free_port(),
            free_port(),
        )
        #: The extauth server's gRPC port (an Upstream for Settings extauthzServerRef); off
        #: unless the test asks for it, so that other tests see only Envoy on xDS.
        self.extauth_port = extauth_port
        #: The rate-limit server's gRPC port (off unless asked for).
        self.ratelimit_port = ratelimit_port
        self.url = f"http://127.0.0.1:{self.http_port}"
        self.https_url = f"https://127.0.0.1:{self.https_port}"
        self.proxy_admin_url = f"http://127.0.0.1:{self.admin_port}"
        self.admin_url = f"http://127.0.0.1:{self.debug_port}"
        self.env = gw_env(home)
        self.process = Process(
            gw_command(
                "up",
                str(folder),
                "--bind",
                "127.0.0.1",
                "--http-port",
                str(self.http_port),
                "--https-port",
                str(self.https_port),
                "--xds-port",
                str(self.xds_port),
                "--proxy-admin-port",
                str(self.admin_port),
                "--debug-port",
                str(self.debug_port),
                "--extauth-port",
                str(self.extauth_port or 0),
                "--ratelimit-port",
                str(self.ratelimit_port or 0),
                "--concurrency",
                "1",
                *extra,
            ),
            self.env,
            home / "gw-up.log",
        )
        try:
            state = wait_until(self._ready, timeout=30, what="gw up to be ready")
        except TimeoutError:
            self.stop()
            raise TimeoutError(
                f"gw up did not get ready; its output:\n{self.process.output()}"
            ) from None
        if state == "exited":
            self.stop()
            raise RuntimeError(f"gw up exited:\n{self.process.output()}")

    def _ready(self) -> str | None:
        """`ready`, `exited` (at once: a gw up that failed to start), or None (not yet)."""
        if not self.process.alive():
            return "exited"
        if not (self.state_dir / "up.json").exists():
            return None  # written once every server started: the proxy listens
        live = httpx.get(self.proxy_admin_url + "/ready", timeout=1)
        proxies = self.admin("/proxies")
        return "ready" if live.status_code == 200 and proxies["translation"]["count"] > 0 else None

    def admin(self, path: str) -> Any:
        response = httpx.get(self.admin_url + path, timeout=5)
        response.raise_for_status()
        return response.json()["data"]

    def statuses(self) -> dict[str, dict[str, Any]]:
        """Status by `Kind namespace.name`."""
        rows = self.admin("/statuses")["resources"]
        return {f"{r['kind']} {r['namespace']}.{r['name']}": r["status"] for r in rows}

    def status(self, key: str) -> dict[str, Any] | None:
        return self.statuses().get(key)

    def wait_status(self, key: str, state: str, timeout: float = 15) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            status = self.status(key)
            return status if status is not None and status["state"] == state else None

        return wait_until(check, timeout=timeout, what=f"{key} to be {state}")

    def get(self, path: str, host: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if host is not None:
            headers["host"] = host
        return httpx.get(self.url + path, headers=headers, timeout=10, **kwargs)

    def envoy_stat(self, name: str) -> int:
        text = httpx.get(
            self.proxy_admin_url + "/stats", params={"filter": f"^{name}$"}, timeout=5
        ).text
        for line in text.splitlines():
            key, _, value = line.partition(": ")
            if key == name:
                return int(value)
        raise KeyError(name)

    def stop(self) -> None:
        self.process.stop(timeout=15)
