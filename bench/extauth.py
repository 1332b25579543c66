"""Benchmark: requests with a valid OIDC session through gw, against the same route without
auth, side by side in one run.

Run from the repository root: `python -m bench.extauth [--duration 5] [--reps 3]
[--profile]`. It writes `bench/results/extauth.json` and `bench/results/extauth.md`.

Scenarios, interleaved and with the order rotated every repetition (the machine is small
and noisy; only ratios within one run mean anything):

- `gw-plain`: a virtual host without auth;
- `gw-extauth-redis`: a virtual host guarded by an AuthConfig with sessions in Redis, every
  request carrying a valid session cookie (logged in once through the real provider);
- `gw-extauth-cookie`: the same with the tokens in cookies (the ID token is verified, then
  cached by the server).

Every route answers `200 ok` from Envoy itself (a direct response), so that no upstream
competes for the two cores: the difference between scenarios is the ext_authz call. Real
processes: `gw up` (Envoy, one worker), `gw extauth` as its own process (so that its CPU
time is its own), Redis, the OIDC provider, `wrk` (one thread, 32 connections). Besides
requests/s and latency, each process's CPU time per request is reported (utime+stime from
/proc), which is steadier than requests/s when everything shares two cores. `--profile`
runs the extauth server under cProfile for one extra `gw-extauth-redis` run and reports
where its time goes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.oidc_agent import Agent
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.processes import GwUp, Process, gw_command, gw_env
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until

RESULTS = Path(__file__).parent / "results"
SCENARIOS = ("gw-plain", "gw-extauth-redis", "gw-extauth-cookie")
HOSTS = {
    "gw-plain": "plain.bench",
    "gw-extauth-redis": "redis.bench",
    "gw-extauth-cookie": "cookie.bench",
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


def config(extauth_port: int, issuer: str, redis: str, port: int) -> str:
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
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: extauth, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {extauth_port}}}]}}}}
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
    def __init__(self, work: Path, duration: float, profile: Path | None) -> None:
        self.work = work
        self.duration = duration
        self.redis = RedisServer(work)
        self.idp = OidcProvider(work)
        folder = work / "config"
        folder.mkdir()
        self.extauth_port = free_port()
        self.gw = GwUp(folder, work / "home", "--extauth-port", "0", "--envoy-log-level", "error")
        self.extauth = self.start_extauth(profile)
        (folder / "bench.yaml").write_text(
            config(self.extauth_port, self.idp.issuer, self.redis.address, self.gw.http_port)
        )
        for name in ("plain", "redis", "cookie"):
            self.gw.wait_status(f"VirtualService default.{name}", "Accepted")
        self.cookies = {s: self.login(s) for s in SCENARIOS if s != "gw-plain"}
        self.pids = {
            "envoy": children(self.gw.process.popen.pid)[0],
            "extauth": self.extauth.popen.pid,
        }

    def start_extauth(self, profile: Path | None) -> Process:
        command = gw_command(
            "extauth", "--xds", f"127.0.0.1:{self.gw.xds_port}", "--bind", "127.0.0.1",
            "--port", str(self.extauth_port), "--log-level", "warning",
        )  # fmt: skip
        if profile is not None:
            command[1:1] = ["-m", "cProfile", "-o", str(profile)]
        return Process(command, gw_env(self.work / "home"), self.work / "extauth.log")

    def login(self, scenario: str) -> str:
        agent = Agent(self.gw.url, f"{HOSTS[scenario]}:{self.gw.http_port}")
        start = wait_until(
            lambda: (r := agent.get("/")).status_code == 302 and r, what="a login redirect"
        )
        done = agent.get(self.idp.login(start.headers["location"], "bench@example.com"))
        assert done.status_code == 302, done.text
        assert agent.get("/").status_code == 200
        return "; ".join(f"{k}={v}" for k, v in agent.cookies.items())

    def run(self, scenario: str) -> Run:
        headers = {"Host": f"{HOSTS[scenario]}:{self.gw.http_port}"}
        if scenario in self.cookies:
            headers["Cookie"] = self.cookies[scenario]
        before = {name: cpu_seconds(pid) for name, pid in self.pids.items()}
        result = wrk(self.gw.url + "/bench", headers, self.duration)
        cpu = {
            name: (cpu_seconds(pid) - before[name]) / max(result["requests"], 1) * 1e6
            for name, pid in self.pids.items()
        }
        if result["errors"] or result["socket_errors"]:
            print(f"  {scenario}: {result['errors']} errors {result['socket_errors']}")
        return Run(scenario, result["rps"], result["p50_ms"], result["p99_ms"],
                   result["requests"], result["errors"], cpu)  # fmt: skip

    def stop(self) -> None:
        for process in (self.extauth, self.gw, self.idp, self.redis):
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


def profile_top(path: Path, limit: int = 25) -> list[dict[str, Any]]:
    """The functions the extauth server spent most of its own time in."""
    stats = pstats.Stats(str(path))
    rows = []
    for (file, line, name), (_, calls, own, total, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"function": f"{Path(file).name}:{line}({name})", "calls": calls,
                     "own_s": round(own, 3), "cumulative_s": round(total, 3)})  # fmt: skip
    rows.sort(key=lambda r: r["own_s"], reverse=True)
    return rows[:limit]


def write(
    summary: dict[str, Any], runs: list[Run], profile: list[dict[str, Any]], args: Any
) -> None:
    RESULTS.mkdir(exist_ok=True)
    data = {
        "benchmark": "extauth",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "settings": {
            "duration_s": args.duration,
            "reps": args.reps,
            "wrk": "-t1 -c32",
            "envoy_workers": 1,
        },  # fmt: skip
        "summary": summary,
        "runs": [r.__dict__ for r in runs],
        "profile_top_own_time": profile,
    }
    (RESULTS / "extauth.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [
        "# extauth benchmark",
        "",
        f"`python -m bench.extauth --duration {args.duration} --reps {args.reps}`, "
        f"{data['date']}, {os.cpu_count()} CPUs. wrk -t1 -c32; Envoy one worker; every "
        "route a direct `200 ok`; medians over the repetitions.",
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
    if profile:
        lines += ["", "Where the extauth server's time goes (cProfile, own time, one run):", "",
                  "| function | calls | own s | cumulative s |", "|---|---|---|---|"]  # fmt: skip
        lines += [f"| `{r['function']}` | {r['calls']} | {r['own_s']} | {r['cumulative_s']} |"
                  for r in profile[:15]]  # fmt: skip
    (RESULTS / "extauth.md").write_text("\n".join(lines) + "\n")


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
    runs: list[Run] = []
    bench = Bench(work, args.duration, None)
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
    finally:
        bench.stop()
    profile: list[dict[str, Any]] = []
    if args.profile:
        path = work / "extauth.prof"
        profiled = Bench(work / "profile", args.duration, path)
        try:
            profiled.run("gw-extauth-redis")
        finally:
            profiled.stop()
        profile = profile_top(path)
    summary = summarize(runs)
    write(summary, runs, profile, args)
    print(json.dumps(summary, indent=2))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
