"""Does the extauth server keep answering while the control plane works? Three layouts of
`gw up`'s Python servers, measured side by side in one run:

- `shared loop`: the extauth server in the control plane's event loop (gw up until #18);
- `own thread`: the extauth server in a thread of the control-plane process, with an
  event loop of its own (nothing of the control plane runs on that loop);
- `own process`: `gw extauth` as a process of its own (gw up since #18).

In each, a client calls the extauth server's gRPC Check 50 times a second (what Envoy does on
every protected request) while the control plane reads and translates a folder that just
received `--upstreams` Upstreams in files of 5,000 plus an alias bomb (hostile, refused at
once). The latencies measured from the writes until the translation is published are
compared with the same layout idle (before the writes). The control plane reads in a
worker thread and translates in another in every layout; what differs is only where the
extauth server runs.

    python -m bench.isolation [--upstreams 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import httpx
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from tests.reliability.hostile_manifests import bomb_in_typed_field, many_documents
from tests.support.ports import free_port

from bench import peers, report

LAYOUTS = ("shared loop", "own thread", "own process")
PER_FILE = 5_000


# --- the layouts --------------------------------------------------------------------------


async def _serve(folder: Path, xds: int, debug: int, extauth: int, layout: str) -> None:
    """The control plane's servers, and the extauth server where `layout` puts it."""
    from gw import lifecycle
    from gw.extauth.server import extauth_server
    from gw.servers import Serving, controlplane_servers
    from gw.translator.options import Options
    from gw.xds.component import Placement

    serving = Serving(bind="127.0.0.1", xds_port=xds, debug_port=debug)
    servers = controlplane_servers(folder, Options(), serving).servers
    placement = Placement(
        bind="127.0.0.1", port=extauth, xds_address=f"127.0.0.1:{xds}", role="gw-system~extauth"
    )
    if layout == "shared loop":
        servers.append(extauth_server(placement))
    else:
        threading.Thread(target=asyncio.run, args=(_alone(placement),), daemon=True).start()
    await lifecycle.serve(servers)


async def _alone(placement: Any) -> None:
    from gw.extauth.server import extauth_server

    server = extauth_server(placement)
    await server.start()
    await server.wait()


class Layout:
    """One layout's processes on free ports; `admin(path)` reads the control plane."""

    def __init__(self, layout: str, folder: Path) -> None:
        self.xds, self.debug, self.extauth = (free_port() for _ in range(3))
        self.log = folder.parent / "processes.log"
        gw = [sys.executable, "-m", "gw"]
        if layout == "own process":
            self.processes = [
                _spawn(
                    [*gw, "controlplane", "--dir", str(folder), "--bind", "127.0.0.1"]
                    + ["--xds-port", str(self.xds), "--debug-port", str(self.debug)],
                    self.log,
                ),
                _spawn(
                    [*gw, "extauth", "--bind", "127.0.0.1", "--port", str(self.extauth)]
                    + ["--xds", f"127.0.0.1:{self.xds}", "--log-level", "warning"],
                    self.log,
                ),
            ]
        else:
            args = [str(folder), str(self.xds), str(self.debug), str(self.extauth), layout]
            command = [sys.executable, "-m", "bench.isolation", "--serve", *args]
            self.processes = [_spawn(command, self.log)]
        self.checks = Checks(self.extauth)
        deadline = time.monotonic() + 120
        while not (self.checks.answers() and self._translated()):
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"{layout} did not start:\n{self.log.read_text()}")
            time.sleep(0.1)

    def admin(self, path: str) -> Any:
        return httpx.get(f"http://127.0.0.1:{self.debug}{path}", timeout=30).json()["data"]

    def _translated(self) -> bool:
        try:
            return bool(self.admin("/proxies")["translation"]["count"] > 0)
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        self.checks.close()
        for process in self.processes:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)


def _spawn(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "START_STATS_SERVER": "1", "LOG_LEVEL": "warning"}
    with log.open("ab") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=out, start_new_session=True)


class Checks:
    """Calls Check every `PERIOD` seconds in a thread (a steady trickle, the same in every
    layout), recording (sent at, seconds) of each answer; a check that takes longer delays
    the next."""

    PERIOD = 0.02

    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = external_auth_pb2_grpc.AuthorizationStub(self.channel)
        self.request = external_auth_pb2.CheckRequest()
        self.request.attributes.context_extensions["config_id"] = "gw-system.none"
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def answers(self) -> bool:
        try:
            self.stub.Check(self.request, timeout=2)
            return True
        except grpc.RpcError:
            return False

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            sent = time.monotonic()
            try:
                self.stub.Check(self.request, timeout=120)
            except grpc.RpcError:
                continue
            self.samples.append((sent, time.monotonic() - sent))
            time.sleep(max(0.0, sent + self.PERIOD - time.monotonic()))

    def between(self, start: float, stop: float) -> list[float]:
        return [seconds * 1000 for sent, seconds in self.samples if start <= sent <= stop]

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(130)
        self.channel.close()


def measure(layout: str, count: int, work: Path) -> dict[str, Any]:
    """Idle latencies for a second, then the latencies while the folder is worked through."""
    folder = work / "config"
    folder.mkdir()
    running = Layout(layout, folder)
    try:
        running.checks.start()
        idle_from = time.monotonic()
        time.sleep(1.0)
        before = running.admin("/proxies")["translation"]["count"]
        written = time.monotonic()
        (folder / "bomb.yaml").write_text(bomb_in_typed_field(8))
        for start in range(0, count, PER_FILE):
            stop = min(start + PER_FILE, count)
            (folder / f"bulk-{start}.yaml").write_text(many_documents(stop, start, "bulk-"))
        deadline = time.monotonic() + 600
        while running.admin("/proxies")["translation"]["count"] == before or not _all_read(
            running, count
        ):
            if time.monotonic() > deadline:
                raise TimeoutError("the folder was not translated in 10 minutes")
            time.sleep(0.2)
        done = time.monotonic()
        idle, busy = (
            running.checks.between(idle_from, written),
            running.checks.between(written, done),
        )
    finally:
        running.stop()
    return {
        "busy_s": round(done - written, 2),
        "idle": _stats(idle),
        "busy": _stats(busy),
    }


def _all_read(running: Layout, count: int) -> bool:
    rows: list[dict[str, Any]] = running.admin("/statuses")["resources"]
    return sum(str(r["name"]).startswith("bulk-") for r in rows) == count


def _stats(ms: list[float]) -> dict[str, float]:
    return {
        "checks": len(ms),
        "p50_ms": round(report.percentile(ms, 50), 2),
        "p99_ms": round(report.percentile(ms, 99), 2),
        "max_ms": round(max(ms, default=float("nan")), 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--upstreams", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        folder, xds, debug, extauth, layout = args.serve
        asyncio.run(_serve(Path(folder), int(xds), int(debug), int(extauth), layout))
        return
    started, load_start = peers.now(), peers.load_average()
    runs: dict[str, list[dict[str, Any]]] = {layout: [] for layout in LAYOUTS}
    for round_ in range(args.rounds):
        for layout in LAYOUTS:  # interleaved: a machine that slows down hurts every layout
            with tempfile.TemporaryDirectory() as tmp:
                runs[layout].append(measure(layout, args.upstreams, Path(tmp)))
            print(f"round {round_ + 1} {layout}: {runs[layout][-1]}", flush=True)
    summary = {
        layout: {
            "busy_s": report.median([r["busy_s"] for r in rs]),
            "idle_p99_ms": report.median([r["idle"]["p99_ms"] for r in rs]),
            "busy_p50_ms": report.median([r["busy"]["p50_ms"] for r in rs]),
            "busy_p99_ms": report.median([r["busy"]["p99_ms"] for r in rs]),
            "busy_max_ms": max(r["busy"]["max_ms"] for r in rs),
        }
        for layout, rs in runs.items()
    }
    rows = [
        [
            layout,
            s["busy_s"],
            s["idle_p99_ms"],
            s["busy_p50_ms"],
            s["busy_p99_ms"],
            s["busy_max_ms"],
        ]
        for layout, s in summary.items()
    ]
    report.write(
        "isolation",
        {
            "upstreams": args.upstreams,
            "rounds": args.rounds,
            "started": started,
            "load_average_at_start": load_start,
            "runs": runs,
            "summary": summary,
        },
        [
            "layout",
            "control plane busy (s)",
            "idle p99 (ms)",
            "busy p50 (ms)",
            "busy p99 (ms)",
            "busy max (ms)",
        ],  # fmt: skip
        rows,
        notes=f"extauth Check latency while the control plane reads and translates "
        f"{args.upstreams:,} new Upstreams and an alias bomb; medians of {args.rounds} "
        "interleaved rounds (max: the worst of all rounds).",
    )


if __name__ == "__main__":
    main()
