"""Benchmark: what per-route statistics (`gw up --route-stats`) cost the proxy.

Run from the repository root: `python -m bench.routestats [--duration 5] [--rounds 8]`. It
writes `bench/results/routestats.json` and `.md`.

Two `gw up` serve the same folder, one with `--route-stats` (every route gets Envoy
statistics of its own: `stat_prefix`, which the console charts) and one without; everything
else is equal. The folder holds the benchmarked route (to nginx answering `200 hello world`
from memory) and `--routes` more VirtualServices of one route each, as a real install has
many routes. `wrk` (one thread, fixed connections) loads both in rounds, alternating which
goes first; every answer must be a 200. Reported: req/s, p50/p99 and the proxy's own CPU time
per request (utime+stime of Envoy from /proc) per scenario, their paired ratios, and the
memory Envoy holds (its admin's `/memory`, `allocated`) with and without, per route.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx
from tests.support.ports import free_port
from tests.support.processes import GwUp
from tests.support.wait import wait_until

from bench import peers, report
from bench.dataplane import GW_CONFIG, HOST, METRICS, Proxy, _envoy_of
from bench.report import RESULTS

SCENARIOS = ("without", "with")
FILLER = """apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: filler-{i}, namespace: bench}}
spec:
  virtualHost:
    domains: [filler-{i}.local]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: hello, namespace: bench}}}}}}
"""


def folder(work: Path, up_port: int, routes: int) -> Path:
    config = work / "config"
    config.mkdir()
    (config / "bench.yaml").write_text(GW_CONFIG.format(port=up_port, host=HOST))
    fillers = "---\n".join(FILLER.format(i=i) for i in range(routes))
    (config / "fillers.yaml").write_text(fillers)
    return config


def allocated(gw: GwUp) -> int:
    """Bytes Envoy's allocator holds (its admin's `/memory`)."""
    return int(httpx.get(gw.proxy_admin_url + "/memory", timeout=5).json()["allocated"])


def run(seconds: float, rounds: int, connections: int, routes: int) -> dict[str, Any]:
    absent = peers.missing("nginx", "wrk")
    if absent:
        raise SystemExit(f"not installed: {', '.join(absent)}: run scripts/bench-deps")
    started, load_start = peers.now(), peers.load_average()
    with tempfile.TemporaryDirectory(prefix="gw-bench-routestats-") as tmp:
        work = Path(tmp)
        up_port = free_port()
        upstream = peers.start_nginx(
            "upstream", peers.nginx_upstream_config(up_port, work / "upstream"), work, up_port
        )
        config = folder(work, up_port, routes)
        proxies: dict[str, Proxy] = {}
        memory: dict[str, int] = {}
        gws: list[GwUp] = []
        try:
            for name in SCENARIOS:
                flags = ["--route-stats"] if name == "with" else []
                quiet = ("--envoy-log-level", "error", "--log-level", "warning")
                gw = GwUp(config, work / f"home-{name}", *quiet, *flags)
                gws.append(gw)
                proxies[name] = Proxy(name, gw.url + "/bench", [_envoy_of(gw)], gw.stop)
                wait_until(lambda gw=gw: _answers(gw), timeout=60, what=f"{name} to route")
            for proxy in proxies.values():  # warm up connections and pools
                proxy.measure(1, connections)
            memory = {name: allocated(gw) for name, gw in zip(SCENARIOS, gws, strict=True)}
            for n in range(rounds):
                order = SCENARIOS if n % 2 == 0 else SCENARIOS[::-1]
                for name in order:
                    result = proxies[name].measure(seconds, connections)
                    proxies[name].runs.append(result)
                    print(f"round {n + 1} {name:8} {result['rps']:9.0f} req/s  "
                          f"cpu {result['cpu_us_per_req']:.1f} µs/req", flush=True)  # fmt: skip
        finally:
            for gw in gws:
                gw.stop()
            upstream.stop()
    return {
        **peers.run_record("routestats", started, load_start),
        "settings": {
            "seconds": seconds,
            "rounds": rounds,
            "connections": connections,
            "routes": routes + 1,
        },
        "memory": {
            "allocated_bytes": memory,
            "bytes_per_route": round((memory["with"] - memory["without"]) / (routes + 1)),
        },
        **summarize(proxies),
    }


def _answers(gw: GwUp) -> bool:
    response = httpx.get(gw.url + "/bench", headers={"host": HOST}, timeout=2)
    return response.status_code == 200


def summarize(proxies: dict[str, Proxy]) -> dict[str, Any]:
    scenarios = {
        name: {
            "median": {k: round(statistics.median(r[k] for r in p.runs), 3) for k in METRICS},
            "runs": p.runs,
        }  # fmt: skip
        for name, p in proxies.items()
    }
    pairs = list(zip(proxies["with"].runs, proxies["without"].runs, strict=True))
    ratios = {
        "with / without": {
            k: round(statistics.median(x[k] / y[k] for x, y in pairs), 3) for k in METRICS
        }
    }
    return {"scenarios": scenarios, "ratios": ratios}


def markdown(result: dict[str, Any]) -> str:
    s, mem = result["settings"], result["memory"]
    lines = [
        "# Per-route statistics: what `gw up --route-stats` costs the proxy",
        "",
        f"`python -m bench.routestats --duration {s['seconds']:g} --rounds {s['rounds']} "
        f"--routes {s['routes'] - 1}`, {result['started']}; wrk -t1 -c{s['connections']}; "
        f"Envoy with one worker; {s['routes']} routes served; medians over the rounds. Load "
        f"average at start {result['load_average']['start']}, at end "
        f"{result['load_average']['end']}.",
        "",
        "| route statistics | req/s | p50 ms | p99 ms | proxy CPU µs/req |",
        "|---|---|---|---|---|",
    ]
    for name, data in result["scenarios"].items():
        m = data["median"]
        lines.append(f"| {name} | {m['rps']:,.0f} | {m['p50_ms']:.2f} | {m['p99_ms']:.2f} | "
                     f"{m['cpu_us_per_req']:.1f} |")  # fmt: skip
    allocated = mem["allocated_bytes"]
    lines += [
        "",
        "Paired ratio (median of the per-round ratios; CPU above 1 is the cost):",
        "",
        *report.ratio_table(result["ratios"]),
        "",
        f"Envoy's allocated memory: {allocated['without'] / 2**20:.1f} MiB without, "
        f"{allocated['with'] / 2**20:.1f} MiB with: {mem['bytes_per_route']:,} bytes per route.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--routes", type=int, default=1000, help="routes besides the measured")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.duration, args.rounds, args.connections, args.routes)
    report.write_part(args.out, "routestats", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
