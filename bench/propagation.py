"""Propagation: time from a file change to the new route answering through Envoy.

A folder holds N VirtualServices (one route each) plus a `probe` VirtualService in a file of
its own. Each sample rewrites the probe's file with a new response body and polls the proxy
(1 ms apart) until that body comes back. The time covers the whole path: the file watcher,
re-reading the changed file, translating all N virtual services, the xDS push and Envoy
applying the new route configuration. The baseline is the same measurement with 10 virtual
services, run in the same session, so ratios show what the configuration size costs.
Goal (issue 2): p95 under 1 s at 10,000.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench import report
from bench.fixtures import write_config

SIZES = (10, 1_000, 10_000)
SAMPLES = 20

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


def measure(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "config"
        write_config(folder, count)
        probe = folder / "probe.yaml"
        probe.write_text(PROBE.format(body="v0"))
        ports = [_free_port() for _ in range(5)]
        env = {**os.environ, "GW_HOME": str(Path(tmp) / "home")}
        cmd = [
            sys.executable,
            "-m",
            "gw",
            "up",
            str(folder),
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
        headers = {"host": "probe.bench.example.com"}
        try:
            with httpx.Client(timeout=5) as client:
                _wait(client, url, headers, "v0", timeout=120)
                samples = []
                for n in range(1, SAMPLES + 1):
                    body = f"v{n}"
                    started = time.perf_counter()
                    probe.write_text(PROBE.format(body=body))
                    _wait(client, url, headers, body, timeout=30)
                    samples.append(time.perf_counter() - started)
        finally:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(30)
    return {
        "virtual_services": count,
        "p50_ms": report.median(samples) * 1000,
        "p95_ms": report.percentile(samples, 95) * 1000,
        "max_ms": max(samples) * 1000,
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


def main() -> None:
    results = [measure(n) for n in SIZES]
    base = results[0]
    rows = [
        [r["virtual_services"], r["p50_ms"], r["p95_ms"], r["max_ms"], r["p95_ms"] / base["p95_ms"]]
        for r in results
    ]
    report.write(
        "propagation",
        {
            "results": results,
            "baseline_virtual_services": base["virtual_services"],
            "goal": {"p95_10k_ms": 1000},
        },
        ["VirtualServices", "p50 (ms)", "p95 (ms)", "max (ms)", "p95 / baseline p95"],
        rows,
        notes=__doc__ or "",
    )


if __name__ == "__main__":
    main()
