"""Benchmark: requests with a valid OIDC session through gw, against the same route without
auth, side by side in one run.

Run from the repository root: `python -m bench.extauth [--duration 5] [--reps 3]
[--profile]`. It writes `bench/results/extauth.json` and `bench/results/extauth.md`.

Scenarios, interleaved and with the order rotated every repetition (the machine is small
and noisy; only ratios within one run mean anything):

- `gw-plain`: a virtual host without auth;
- `gw-extauth-redis`: a virtual host guarded by an AuthConfig with sessions in Redis, every
  request carrying a valid session cookie (logged in once through the real provider),
  checked over HTTP/1.1 (`gw extauth --http-port`, the Upstream `extauth-http`), as `gw up`
  and the Kubernetes install do;
- `gw-extauth-redis-grpc`: the same with every check over gRPC (no `extauth-http`
  Upstream for its runs): what the HTTP checks save;
- `gw-extauth-cookie`: as `gw-extauth-redis` with the tokens in cookies (the ID token is
  verified, then cached by the server);
- `gw-extauth-redis-2-servers`: as `gw-extauth-redis`, with two extauth server processes
  behind the extauth Upstreams (two replicas; Envoy balances checks across them).

Every route answers `200 ok` from Envoy itself (a direct response), so that no upstream
competes for the two cores: the difference between scenarios is the ext_authz call. Real
processes: `gw up` (Envoy, one worker), `gw extauth` as its own process (so that its CPU
time is its own), Redis, the OIDC provider, `wrk` (one thread, 32 connections). Besides
requests/s and latency, each process's CPU time per request is reported (utime+stime from
/proc), which is steadier than requests/s when everything shares two cores. `--profile`
samples the extauth server with `perf` during one extra `gw-extauth-redis` run (HTTP
checks) and reports where its CPU time goes, by shared object and by function (Python,
grpc's C core, protobuf, the event loop, the kernel).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import GwUp, Process, gw_command, gw_env
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until

from bench import peers, report

RESULTS = report.RESULTS
SCENARIOS = (
    "gw-plain",
    "gw-extauth-redis",
    "gw-extauth-redis-grpc",
    "gw-extauth-cookie",
    "gw-extauth-redis-2-servers",
)
HOSTS = {
    "gw-plain": "plain.bench",
    "gw-extauth-redis": "redis.bench",
    "gw-extauth-redis-grpc": "redis.bench",
    "gw-extauth-cookie": "cookie.bench",
    "gw-extauth-redis-2-servers": "redis.bench",
}
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    scenario: str
    rps: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int
    cpu_us: dict[str, float] = field(default_factory=dict)


def server_upstream(ports: list[int], name: str = "extauth") -> str:
    hosts = ", ".join(f"{{addr: 127.0.0.1, port: {p}}}" for p in ports)
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: gw-system}}
spec: {{static: {{hosts: [{hosts}]}}}}
"""


def config(issuer: str, redis: str, port: int) -> str:
    def auth(name: str, session: str) -> str:
        return f"""
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: {name}, namespace: gw-system}}
spec:
  configs:
  - oauth2:
      oidcAuthorizationCode:
        appUrl: http://{name}.bench:{port}
        callbackPath: /callback
        clientId: bench-{name}
        clientSecretRef: {{name: oauth, namespace: gw-system}}
        issuerUrl: {issuer}
        session: {session}
        headers: {{idTokenHeader: x-id-token}}
---"""

    def host(name: str, guarded: bool) -> str:
        options = (
            f"\n    options: {{extauth: {{configRef: {{name: {name}, namespace: gw-system}}}}}}"
            if guarded
            else ""
        )
        return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ["{name}.bench:*"]{options}
    routes:
    - matchers: [{{prefix: /}}]
      directResponseAction: {{status: 200, body: ok}}
---"""

    redis_session = f'{{store: {{cookieName: sid, options: {{host: "{redis}"}}}}}}'
    return f"""
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extauth:
    extauthzServerRef: {{name: extauth, namespace: gw-system}}
    requestTimeout: 5s
---
apiVersion: v1
kind: Secret
metadata: {{name: oauth, namespace: gw-system}}
type: extauth.vendor.io/oauth
stringData: {{client-secret: bench}}
---{auth("redis", redis_session)}{auth("cookie", "{}")}
{host("plain", False)}{host("redis", True)}{host("cookie", True)}
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def context_switches(pid: int) -> dict[str, int]:
    """Voluntary (a thread waits: a hand-off) and involuntary (preempted) switches, summed
    over the process's threads."""
    out = {"voluntary": 0, "involuntary": 0}
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches"):
                out["voluntary"] += int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches"):
                out["involuntary"] += int(line.split()[1])
    return out


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def wrk(url: str, headers: dict[str, str], duration: float) -> dict[str, Any]:
    args = ["wrk", "-t1", "-c32", f"-d{duration:g}s", "--latency", url]
    for key, value in headers.items():
        args[1:1] = ["-H", f"{key}: {value}"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: .*", out)
    return {
        "rps": rps,
        "requests": requests,
        "errors": int(errors.group(1)) if errors else 0,
        "socket_errors": socket_errors.group(0) if socket_errors else "",
        "p50_ms": _latency(out, "50%"),
        "p99_ms": _latency(out, "99%"),
    }


def _latency(out: str, pct: str) -> float:
    value, unit = re.search(rf"{re.escape(pct)}\s+([\d.]+)(us|ms|s)", out).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


class Bench:
    def __init__(self, work: Path, duration: float) -> None:
        self.work = work
        self.duration = duration
        self.started: list[Any] = []  # stopped by stop(), whatever got started
        try:
            self._start(work)
        except BaseException:
            self.stop()
            raise

    def _start(self, work: Path) -> None:
        self.redis = self._keep(RedisServer(work))
        self.idp = self._keep(OidcProvider(work))
        self.folder = work / "config"
        self.folder.mkdir()
        self.ports = [free_port(), free_port()]
        self.http_ports = [free_port(), free_port()]
        self.gw = self._keep(
            GwUp(self.folder, work / "home", "--extauth-port", "0", "--envoy-log-level", "error")
        )
        self.servers = [
            self.start_extauth(p, h) for p, h in zip(self.ports, self.http_ports, strict=True)
        ]
        (self.folder / "bench.yaml").write_text(
            config(self.idp.issuer, self.redis.address, self.gw.http_port)
        )
        # After the AuthConfigs: the HTTP filter is there once one of them is served over HTTP.
        self.use_servers(1)
        for name in ("plain", "redis", "cookie"):
            self.gw.wait_status(f"VirtualService default.{name}", "Accepted")
        self.cookies = {s: self.login(s) for s in SCENARIOS if s != "gw-plain"}
        self.pids = {"envoy": children(self.gw.process.popen.pid)[0]}
        self.pids.update({f"extauth-{i}": p.popen.pid for i, p in enumerate(self.servers)})

    def start_extauth(self, port: int, http_port: int) -> Process:
        command = gw_command(
            "extauth", "--xds", f"127.0.0.1:{self.gw.xds_port}", "--bind", "127.0.0.1",
            "--port", str(port), "--http-port", str(http_port), "--log-level", "warning",
        )  # fmt: skip
        process = Process(command, gw_env(self.work / "home"), self.work / f"extauth-{port}.log")
        self._keep(process)
        return process

    def _keep(self, process: Any) -> Any:
        self.started.append(process)
        return process

    def use_servers(self, count: int, http: bool = True) -> None:
        """Point the extauth Upstream at `count` servers, and `extauth-http` at their HTTP
        checks (`http`; else no such Upstream: every check over gRPC); wait until Envoy has
        them."""
        (self.folder / "extauth-upstream.yaml").write_text(server_upstream(self.ports[:count]))
        checks = self.folder / "extauth-http-upstream.yaml"
        if http:
            checks.write_text(server_upstream(self.http_ports[:count], "extauth-http"))
        else:
            checks.unlink(missing_ok=True)

        def count_hosts(clusters: str, cluster: str) -> int:
            prefix = f"{cluster}::127.0.0.1:"
            return len({ln.split("::")[1] for ln in clusters.splitlines() if ln.startswith(prefix)})

        def applied() -> bool:
            clusters = httpx.get(self.gw.proxy_admin_url + "/clusters", timeout=5).text
            listeners = httpx.get(self.gw.proxy_admin_url + "/config_dump", timeout=5).text
            return (
                count_hosts(clusters, "extauth_gw-system") == count
                and count_hosts(clusters, "extauth-http_gw-system") == (count if http else 0)
                and ("gw.ext_authz.http" in listeners) == http
            )

        wait_until(applied, timeout=30, what=f"Envoy to use {count} extauth servers")

    def login(self, scenario: str) -> str:
        agent = Agent(self.gw.url, f"{HOSTS[scenario]}:{self.gw.http_port}")
        start = agent.start_login("/")
        done = agent.get(self.idp.login(start.headers["location"], "bench@example.com"))
        assert done.status_code == 302, done.text
        assert agent.get("/").status_code == 200
        return "; ".join(f"{k}={v}" for k, v in agent.cookies.items())

    def run(self, scenario: str) -> Run:
        self.use_servers(
            2 if scenario.endswith("2-servers") else 1, http=not scenario.endswith("-grpc")
        )
        headers = {"Host": f"{HOSTS[scenario]}:{self.gw.http_port}"}
        if scenario in self.cookies:
            headers["Cookie"] = self.cookies[scenario]
        before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        result = wrk(self.gw.url + "/bench", headers, self.duration)
        per_process = {
            name: (cpu_seconds(pid) - before[name]) / max(result["requests"], 1) * 1e6
            for name, pid in self.pids.items()
        }
        cpu = {
            "envoy": per_process["envoy"],
            "extauth": sum(v for k, v in per_process.items() if k.startswith("extauth")),
        }
        if result["errors"] or result["socket_errors"]:
            print(f"  {scenario}: {result['errors']} errors {result['socket_errors']}")
        return Run(scenario, result["rps"], result["p50_ms"], result["p99_ms"],
                   result["requests"], result["errors"], cpu)  # fmt: skip

    def profile(self, work: Path) -> dict[str, Any]:
        """Sample the (first) extauth server while wrk loads it with sessions."""
        self.use_servers(1)
        headers = {
            "Host": f"{HOSTS['gw-extauth-redis']}:{self.gw.http_port}",
            "Cookie": self.cookies["gw-extauth-redis"],
        }
        pid = self.servers[0].popen.pid
        before = context_switches(pid)
        with ThreadPoolExecutor(1) as pool:
            load = pool.submit(wrk, self.gw.url + "/bench", headers, self.duration)
            profile = perf_profile(pid, self.duration - 1, work)
            requests = load.result()["requests"]
        after = context_switches(pid)
        profile["context_switches_per_check"] = {
            kind: round((after[kind] - before[kind]) / max(requests, 1), 2) for kind in after
        }
        profile["threads"] = len(list(Path(f"/proc/{pid}/task").iterdir()))
        return profile

    def stop(self) -> None:
        for process in reversed(self.started):
            process.stop()


def summarize(runs: list[Run]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for scenario in SCENARIOS:
        mine = [r for r in runs if r.scenario == scenario]
        out[scenario] = {
            "rps_median": round(statistics.median(r.rps for r in mine)),
            "rps_min": round(min(r.rps for r in mine)),
            "rps_max": round(max(r.rps for r in mine)),
            "p50_ms_median": round(statistics.median(r.p50_ms for r in mine), 2),
            "p99_ms_median": round(statistics.median(r.p99_ms for r in mine), 2),
            "p99_ms_max": round(max(r.p99_ms for r in mine), 2),
            "errors": sum(r.errors for r in mine),
            "cpu_us_per_request": {
                name: round(statistics.median(r.cpu_us[name] for r in mine), 1)
                for name in mine[0].cpu_us
            },
        }
    plain = out["gw-plain"]["rps_median"]
    for scenario in SCENARIOS:
        out[scenario]["rps_vs_plain"] = round(out[scenario]["rps_median"] / plain, 3)
    return out


def perf_profile(pid: int, seconds: float, work: Path) -> dict[str, Any]:
    """CPU samples of process `pid` for `seconds`: shares by shared object and the top
    functions (`perf record`, user space; Python 3.11 frames show as the interpreter)."""
    data = work / "perf.data"
    subprocess.run(
        ["perf", "record", "-q", "-F", "999", "-p", str(pid), "-o", str(data), "--",
         "sleep", f"{seconds:g}"],
        check=True, capture_output=True,
    )  # fmt: skip

    def report(sort: str) -> list[tuple[float, str]]:
        out = subprocess.run(
            ["perf", "report", "-i", str(data), "--stdio", "--no-children", "--sort", sort],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        rows = []
        for line in out.splitlines():
            match = re.match(r"\s*([\d.]+)%\s+(.*\S)", line)
            if match:
                rows.append((float(match.group(1)), re.sub(r"\s+", " ", match.group(2))))
        return rows

    return {
        "by_object": [{"share_pct": p, "object": o} for p, o in report("dso")[:8]],
        "top_functions": [{"share_pct": p, "function": f} for p, f in report("dso,sym")[:15]],
    }


def write(
    summary: dict[str, Any], runs: list[Run], profile: dict[str, Any], args: Any, load: list[Any]
) -> None:
    """`load`: the load average at the start and at the end (other jobs move the numbers)."""
    RESULTS.mkdir(exist_ok=True)
    date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    data: dict[str, Any] = {
        "benchmark": "extauth",
        "date": date,
        "machine": report.machine(),
        "load_average": {"start": load[0], "end": load[1]},
        "settings": {
            "duration_s": args.duration,
            "reps": args.reps,
            "wrk": "-t1 -c32",
            "envoy_workers": 1,
        },  # fmt: skip
        "summary": summary,
        "runs": [r.__dict__ for r in runs],
        "profile": profile,
    }
    (RESULTS / "extauth.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "extauth.md").write_text(markdown(summary, profile, args, date, load))


def markdown(
    summary: dict[str, Any], profile: dict[str, Any], args: Any, date: str, load: list[Any]
) -> str:
    profiled = " --profile" if args.profile else ""
    lines = [
        "# extauth benchmark",
        "",
        f"`python -m bench.extauth --duration {args.duration} --reps {args.reps}{profiled}`, "
        f"{date}, {os.cpu_count()} CPUs, load average at start {load[0]}, at end {load[1]}. "
        "wrk -t1 -c32; Envoy one worker; every route a direct `200 ok`; medians over the "
        "repetitions.",
        "",
        "| scenario | req/s (min–max) | vs plain | p50 ms | p99 ms (max) | Envoy CPU µs/req "
        "| extauth CPU µs/req | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summary.items():
        cpu = s["cpu_us_per_request"]
        lines.append(
            f"| {name} | {s['rps_median']} ({s['rps_min']}–{s['rps_max']}) | "
            f"{s['rps_vs_plain']} | {s['p50_ms_median']} | {s['p99_ms_median']} "
            f"({s['p99_ms_max']}) | {cpu['envoy']} | {cpu['extauth']} | {s['errors']} |"
        )
    lines += reading(summary)
    if profile:
        lines += profile_lines(profile)
    return "\n".join(lines) + "\n"


def reading(summary: dict[str, Any]) -> list[str]:
    """The ceiling the measured CPU costs allow, in words."""
    http, grpc = summary["gw-extauth-redis"], summary["gw-extauth-redis-grpc"]
    two = summary["gw-extauth-redis-2-servers"]
    plain_us = summary["gw-plain"]["cpu_us_per_request"]["envoy"]
    envoy_us, extauth_us = (http["cpu_us_per_request"][k] for k in ("envoy", "extauth"))
    g_envoy, g_extauth = (grpc["cpu_us_per_request"][k] for k in ("envoy", "extauth"))
    cpus = os.cpu_count() or 1
    return [
        "",
        "Reading: over HTTP/1.1 (the default) an authenticated request costs "
        f"{envoy_us:.0f} µs of Envoy CPU ({envoy_us - plain_us:.0f} µs more than without "
        f"auth: the HTTP call) and {extauth_us:.0f} µs of the extauth server's; over gRPC "
        f"{g_envoy:.0f} and {g_extauth:.0f} µs (`gw-extauth-redis-grpc`, "
        f"{grpc['rps_median']} req/s against {http['rps_median']}). One server process "
        f"therefore tops out near {1e6 / extauth_us:,.0f} checks/s over HTTP "
        f"({1e6 / g_extauth:,.0f} over gRPC), and the {cpus} cores near "
        f"{cpus * 1e6 / (envoy_us + extauth_us):,.0f} req/s even if Envoy, the server and wrk "
        "used them completely; p99 is queueing behind 32 connections, not a stall. Two "
        f"server processes (`gw-extauth-redis-2-servers`, {two['rps_median']} req/s, "
        f"{two['rps_median'] / http['rps_median'] - 1:+.0%}) spread the Python work over "
        "both cores, within the same CPU total.",
    ]


def profile_lines(profile: dict[str, Any]) -> list[str]:
    switches = profile["context_switches_per_check"]
    lines = [
        "",
        "Where the extauth server's CPU goes (`perf`, one `gw-extauth-redis` run). The "
        f"process ran {profile['threads']} threads and switched context "
        f"{switches['voluntary']} times per check voluntarily (a thread handing work to "
        f"another, or waiting for the next request) and "
        f"{switches['involuntary']} times involuntarily (preempted: wrk, Envoy and other "
        "processes share the cores). By shared object:",
        "",
        "| share | object |",
        "|---|---|",
    ]
    lines += [f"| {r['share_pct']}% | `{r['object']}` |" for r in profile["by_object"]]
    lines += ["", "Top functions:", "", "| share | object / function |", "|---|---|"]
    lines += [f"| {r['share_pct']}% | `{r['function']}` |" for r in profile["top_functions"]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    for tool in ("wrk", "redis-server"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed: run scripts/system-deps")
    work = Path(tempfile.mkdtemp(prefix="gw-bench-extauth-"))
    load_start = peers.load_average()
    runs: list[Run] = []
    profile: dict[str, Any] = {}
    bench = Bench(work, args.duration)
    try:
        for scenario in SCENARIOS:  # warm-up
            bench.run(scenario)
        for rep in range(args.reps):
            order = SCENARIOS[rep % len(SCENARIOS) :] + SCENARIOS[: rep % len(SCENARIOS)]
            for scenario in order:
                run = bench.run(scenario)
                print(f"rep {rep} {scenario}: {run.rps:.0f} req/s p99 {run.p99_ms} ms "
                      f"cpu {run.cpu_us}", flush=True)  # fmt: skip
                runs.append(run)
        if args.profile and shutil.which("perf"):
            profile = bench.profile(work)
    finally:
        bench.stop()
    summary = summarize(runs)
    write(summary, runs, profile, args, [load_start, peers.load_average()])
    print(json.dumps(summary, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
