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

The N VirtualServices are the mixed fixture (`fixtures.py`: ten Upstreams, one in 20
delegating to a RouteTable, one in 50 over TLS). Once the proxy answers, the memory of the
processes is read: the `gw up` process's peak RSS (control plane, store, xDS server) and
Envoy's heap as its admin `/memory` reports it.

Goals (issue 20): p95 under 20 ms at 1,000, 50 ms at 10,000 and 200 ms at 100,000
VirtualServices, idle and under load, with no failed request in the load loop.

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
from tests.support.ports import free_port

from bench import peers, report
from bench.fixtures import write_config

SIZES = (10, 1_000, 10_000)
#: Seconds to wait for the first answer, per VirtualService (reading and loading 100,000
#: takes minutes on 2 cores).
START_PER_VS = 0.01
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


def measure(count: int, samples: int = SAMPLES) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        up_port = free_port()
        upstream = peers.start_nginx(
            "upstream", peers.nginx_upstream_config(up_port, work / "upstream"), work, up_port
        )
        folder = work / "config"
        write_config(folder, count, upstream_port=up_port, mixed=True)
        probe = folder / "probe.yaml"
        probe.write_text(PROBE.format(body="v0"))
        ports = [free_port() for _ in range(5)]
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
                _wait(client, url, PROBE_HEADERS, "v0", timeout=120 + START_PER_VS * count)
                memory = _memory(proc.pid, ports[3])
                _wait(client, url + "r", {"host": LOAD_HOST}, "hello world\n", timeout=30)
                version = iter(range(1, 2 * samples + 1))
                debug = f"http://127.0.0.1:{ports[4]}/proxies"
                idle, idle_parts = _samples(client, url, probe, version, samples, debug)
                load = subprocess.Popen(
                    ["wrk", "-t1", "-c16", "-d3600s", "-H", f"Host: {LOAD_HOST}", url + "r"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                try:
                    time.sleep(1)  # the loop is up to speed before the first change
                    loaded, load_parts = _samples(client, url, probe, version, samples, debug)
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
        **memory,
        "idle": {**_stats(idle), **_parts(idle_parts)},
        "load": {
            **_stats(loaded),
            **_parts(load_parts),
            "loop_rps": loop["rps"],
            "loop_requests": loop["requests"],
            "loop_failed": loop["non_2xx"] + loop["socket_errors"],
            "loop_non_2xx": loop["non_2xx"],
            "loop_socket_errors": loop["socket_errors"],
        },
    }


PROBE_HEADERS = {"host": "probe.bench.example.com"}


def _memory(gw_pid: int, admin_port: int) -> dict[str, float]:
    """The `gw up` process's peak RSS and Envoy's heap, in MB."""
    status = Path(f"/proc/{gw_pid}/status").read_text()
    peak = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    envoy = httpx.get(f"http://127.0.0.1:{admin_port}/memory", timeout=10).json()
    return {
        "gw_peak_rss_mb": round(int(peak.split()[1]) / 1024, 1),
        "envoy_heap_mb": round(int(envoy["heap_size"]) / 2**20, 1),
        "envoy_allocated_mb": round(int(envoy["allocated"]) / 2**20, 1),
    }


def _samples(
    client: httpx.Client,
    url: str,
    probe: Path,
    version: Iterator[int],
    samples: int,
    debug: str,
) -> tuple[list[float], list[tuple[float, float]]]:
    """Rewrite the probe `samples` times; each time, how long until its new body answers,
    and (the control plane's translation, Envoy's applying of the route push) in ms."""
    out, parts = [], []
    for _ in range(samples):
        body = f"v{next(version)}"
        started = time.perf_counter()
        probe.write_text(PROBE.format(body=body))
        _wait(client, url, PROBE_HEADERS, body, timeout=60)
        out.append(time.perf_counter() - started)
        parts.append(_last_push(client, debug))
    return out, parts


def _last_push(client: httpx.Client, debug: str) -> tuple[float, float]:
    """The last translation's time, and how long the proxy took from the last route push
    to its ACK (the xDS server's `applyMs`), in ms."""
    data = client.get(debug, timeout=30).json()["data"]
    applied = 0.0
    for connection in data["connections"]:
        if connection["role"].endswith("gateway-proxy"):
            routes = connection["types"].get("envoy.config.route.v3.RouteConfiguration", {})
            applied = routes.get("applyMs") or 0.0
    return data["translation"]["lastDurationMs"], applied


def _parts(parts: list[tuple[float, float]]) -> dict[str, float]:
    return {
        "translate_p50_ms": round(report.median([t for t, _ in parts]), 1),
        "envoy_routes_apply_p50_ms": round(report.median([a for _, a in parts]), 1),
    }


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
            r["idle"]["translate_p50_ms"],
            r["idle"]["envoy_routes_apply_p50_ms"],
            r["gw_peak_rss_mb"],
            r["envoy_heap_mb"],
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
            "goal": {"p95_1k_ms": 20, "p95_10k_ms": 50, "p95_100k_ms": 200},
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
            "idle: translation p50 (ms)",
            "idle: Envoy applying the route push p50 (ms)",
            "gw up peak RSS (MB)",
            "Envoy heap (MB)",
        ],
        rows,
        notes=(__doc__ or "")
        + f"\nLoad average at start {load_start}, at end {peers.load_average()}.\n",
    )


if __name__ == "__main__":
    main()
