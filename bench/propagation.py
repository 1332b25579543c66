"""Propagation: time from a file change to the new route answering through Envoy.

A folder holds N VirtualServices (one route each) plus a `probe` VirtualService in a file of
its own. Each sample rewrites the probe's file with a new response body and polls the proxy
(1 ms apart) until that body comes back. The time covers the whole path: the file watcher,
re-reading the changed file, translating all N virtual services, the xDS push and Envoy
applying the new route configuration. The baseline is the same measurement with 10 virtual
services, run in the same session, so ratios show what the configuration size costs.

Each size is measured twice in the same `gw up`: idle, then under load — `wrk` (one
thread, 16 connections) running through the proxy against another, unchanged route
(`host-1`, proxied to an nginx upstream answering from memory) for as long as the samples
take. The load loop's failed requests (answers other than 2xx/3xx, and socket errors) are
reported: a change to one route must not fail requests on the others.
Goal (issue 2): p95 under 1 s at 10,000.

Run from the repository root: `python -m bench.propagation [--samples 20] [--sizes 10,1000]`.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench import peers, report
from bench.fixtures import write_config

SIZES = (10, 1_000, 10_000)
SAMPLES = 20
LOAD_HOST = "host-1.bench.example.com"

PROBE = """apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: probe, namespace: bench}}
spec:
  virtualHost:
    domains: [probe.bench.example.com]
    routes:
      - matchers: [{{prefix: /}}]
        directResponseAction: {{status: 200, body: "{body}"}}
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def measure(count: int, samples: int = SAMPLES) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        up_port = _free_port()
        upstream = peers.start_nginx(
            "upstream", peers.nginx_upstream_config(up_port, work / "upstream"), work, up_port
        )
        folder = work / "config"
        write_config(folder, count, upstream_port=up_port)
        probe = folder / "probe.yaml"
        probe.write_text(PROBE.format(body="v0"))
        ports = [_free_port() for _ in range(5)]
        env = {**os.environ, "GW_HOME": str(work / "home")}
        cmd = [
            sys.executable,
            "-m",
            "gw",
            "up",
            str(folder),
            "--bind",
            "127.0.0.1",
            "--http-port",
            str(ports[0]),
            "--https-port",
            str(ports[1]),
            "--xds-port",
            str(ports[2]),
            "--proxy-admin-port",
            str(ports[3]),
            "--debug-port",
            str(ports[4]),
            "--log-level",
            "warning",
            "--envoy-log-level",
            "error",
        ]
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{ports[0]}/"
        try:
            with httpx.Client(timeout=5) as client:
                _wait(client, url, PROBE_HEADERS, "v0", timeout=120)
                _wait(client, url + "r", {"host": LOAD_HOST}, "hello world\n", timeout=30)
                version = iter(range(1, 2 * samples + 1))
                idle = _samples(client, url, probe, version, samples)
                load = subprocess.Popen(
                    ["wrk", "-t1", "-c16", "-d3600s", "-H", f"Host: {LOAD_HOST}", url + "r"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                try:
                    time.sleep(1)  # the loop is up to speed before the first change
                    loaded = _samples(client, url, probe, version, samples)
                    time.sleep(1)  # and answers what follows the last change
                finally:
                    load.send_signal(signal.SIGINT)  # wrk prints its totals on SIGINT
                    out = load.communicate(timeout=30)[0]
                loop = peers.parse_wrk(out)
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(30)
            upstream.stop()
    return {
        "virtual_services": count,
        "idle": _stats(idle),
        "load": {
            **_stats(loaded),
            "loop_rps": loop["rps"],
            "loop_requests": loop["requests"],
            "loop_failed": loop["non_2xx"] + loop["socket_errors"],
            "loop_non_2xx": loop["non_2xx"],
            "loop_socket_errors": loop["socket_errors"],
        },
    }


PROBE_HEADERS = {"host": "probe.bench.example.com"}


def _samples(
    client: httpx.Client, url: str, probe: Path, version: Iterator[int], samples: int
) -> list[float]:
    """Rewrite the probe `samples` times; each time, how long until its new body answers."""
    out = []
    for _ in range(samples):
        body = f"v{next(version)}"
        started = time.perf_counter()
        probe.write_text(PROBE.format(body=body))
        _wait(client, url, PROBE_HEADERS, body, timeout=60)
        out.append(time.perf_counter() - started)
    return out


def _stats(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(report.median(samples) * 1000, 1),
        "p95_ms": round(report.percentile(samples, 95) * 1000, 1),
        "max_ms": round(max(samples) * 1000, 1),
        "samples": len(samples),
    }


def _wait(
    client: httpx.Client, url: str, headers: dict[str, str], body: str, timeout: float
) -> None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            if client.get(url, headers=headers).text == body:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.001)
    raise TimeoutError(f"{body!r} did not arrive within {timeout}s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=SAMPLES, help="changes per size and mode")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args(argv)
    absent = peers.missing("nginx", "wrk")
    if absent:
        raise SystemExit(f"not installed: {', '.join(absent)}: run scripts/bench-deps")
    started, load_start = peers.now(), peers.load_average()
    results = [measure(int(n), args.samples) for n in args.sizes.split(",")]
    base = results[0]
    rows = [
        [
            r["virtual_services"],
            r["idle"]["p50_ms"],
            r["idle"]["p95_ms"],
            r["load"]["p50_ms"],
            r["load"]["p95_ms"],
            r["load"]["max_ms"],
            r["load"]["p95_ms"] / base["load"]["p95_ms"],
            f"{r['load']['loop_rps']:,.0f}",
            f"{r['load']['loop_failed']} of {r['load']['loop_requests']:,}",
        ]
        for r in results
    ]
    report.write(
        "propagation",
        {
            "started": started,
            "load_average": {"start": load_start, "end": peers.load_average()},
            "settings": {"samples": args.samples, "load": "wrk -t1 -c16 on another route"},
            "results": results,
            "baseline_virtual_services": base["virtual_services"],
            "goal": {"p95_10k_ms": 1000},
        },
        [
            "VirtualServices",
            "idle p50 (ms)",
            "idle p95 (ms)",
            "under load p50 (ms)",
            "under load p95 (ms)",
            "under load max (ms)",
            "load p95 / baseline load p95",
            "load loop req/s",
            "load loop failed requests",
        ],
        rows,
        notes=(__doc__ or "")
        + f"\nLoad average at start {load_start}, at end {peers.load_average()}.\n",
    )


if __name__ == "__main__":
    main()
