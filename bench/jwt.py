"""Benchmark: JWT + RBAC through gw, the same route without them, and hand-written Envoy.

Run from the repository root: `python -m bench.jwt [--duration 2] [--reps 9]`. It writes
`bench/results/jwt.json` and `bench/results/jwt.md`.

Four scenarios run side by side in one run, interleaved and with the order rotated every
repetition (the machine is small and noisy; only ratios within one run mean anything):

- `gw-jwt-rbac`: `gw up`, a VirtualService with a local RS256 provider and one RBAC policy;
- `gw-plain`: the same `gw up`, another VirtualService without them;
- `envoy-jwt-rbac`: a plain Envoy with a hand-written static config doing the same checks
  (jwt_authn with the verification cache, rbac on the verified claim);
- `envoy-plain`: that hand-written Envoy's listener without the two filters.

All proxies run one worker thread and send to the same upstream: another Envoy answering
`200 hello` itself, so that the upstream is never the bottleneck. Load comes from `wrk`
(one thread, 32 connections, one valid token reused, as a client session would). Besides
requests/s and latency, the proxy's own CPU time per request is reported: it is steadier than
requests/s when wrk, proxy and upstream share two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from tests.support.ports import free_port
from tests.support.processes import GwUp, Process
from tests.support.tokens import SigningKey
from tests.support.wait import wait_until

from bench import report

RESULTS = report.RESULTS
ISSUER = "https://issuer.bench"
#: Compared pairs sit next to each other, so that they run close in time in every rotation.
SCENARIOS = ("gw-jwt-rbac", "envoy-jwt-rbac", "gw-plain", "envoy-plain")
ENVOY = shutil.which("envoy") or str(Path(sys.executable).parent / "envoy")
_TYPES = {
    "hcm": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3."
    "HttpConnectionManager",
    "jwt_authn": "type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication",
}

#: The hand-written baseline: what someone would write for Envoy by hand (ENVOY-NOTES §2).
HANDWRITTEN = """
admin:
  address: {{socket_address: {{address: 127.0.0.1, port_value: {admin}}}}}
static_resources:
  clusters:
  - name: upstream
    type: STATIC
    connect_timeout: 5s
    load_assignment:
      cluster_name: upstream
      endpoints:
      - lb_endpoints:
        - endpoint: {{address: {{socket_address: {{address: 127.0.0.1, port_value: {upstream}}}}}}}
  listeners:
  - name: secure
    address: {{socket_address: {{address: 127.0.0.1, port_value: {secure}}}}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": {hcm}
          stat_prefix: secure
          normalize_path: true
          merge_slashes: true
          route_config:
            virtual_hosts:
            - name: secure
              domains: ["*"]
              routes: [{{match: {{prefix: /}}, route: {{cluster: upstream}}}}]
          http_filters:
          - name: envoy.filters.http.jwt_authn
            typed_config:
              "@type": {jwt_authn}
              providers:
                p:
                  issuer: {issuer}
                  local_jwks: {{inline_string: '{jwks}'}}
                  payload_in_metadata: p
                  jwt_cache_config: {{jwt_cache_size: 1000}}
              rules: [{{match: {{prefix: /}}, requires: {{provider_name: p}}}}]
          - name: envoy.filters.http.rbac
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC
              rules:
                action: ALLOW
                policies:
                  users:
                    permissions:
                    - and_rules:
                        rules:
                        - header: {{name: ":method", string_match: {{exact: GET}}}}
                        - url_path: {{path: {{prefix: /}}}}
                    principals:
                    - sourced_metadata:
                        metadata_matcher:
                          filter: envoy.filters.http.jwt_authn
                          path: [{{key: p}}, {{key: role}}]
                          value: {{string_match: {{exact: user}}}}
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
  - name: plain
    address: {{socket_address: {{address: 127.0.0.1, port_value: {plain}}}}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": {hcm}
          stat_prefix: plain
          normalize_path: true
          merge_slashes: true
          route_config:
            virtual_hosts:
            - name: plain
              domains: ["*"]
              routes: [{{match: {{prefix: /}}, route: {{cluster: upstream}}}}]
          http_filters:
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
"""

UPSTREAM = """
admin:
  address: {{socket_address: {{address: 127.0.0.1, port_value: {admin}}}}}
static_resources:
  listeners:
  - name: hello
    address: {{socket_address: {{address: 127.0.0.1, port_value: {port}}}}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": {hcm}
          stat_prefix: hello
          route_config:
            virtual_hosts:
            - name: hello
              domains: ["*"]
              routes:
              - match: {{prefix: /}}
                direct_response: {{status: 200, body: {{inline_string: "hello world\\n"}}}}
          http_filters:
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
"""


@dataclass
class Target:
    url: str
    headers: dict[str, str]
    pid: int
    runs: list[dict[str, float]] = field(default_factory=list)


def start_envoy(config: str, workdir: Path, name: str, admin: int) -> Process:
    path = workdir / f"{name}.yaml"
    path.write_text(config)
    process = Process(
        [ENVOY, "-c", str(path), "--concurrency", "1", "--disable-hot-restart", "-l", "error"],
        dict(os.environ),
        workdir / f"{name}.log",
    )
    wait_until(
        lambda: httpx.get(f"http://127.0.0.1:{admin}/ready", timeout=1).status_code == 200,
        what=f"{name} envoy",
    )
    return process


def gw_manifests(key: SigningKey, upstream_port: int) -> list[dict[str, Any]]:
    to_upstream = {"single": {"upstream": {"name": "hello", "namespace": "gw-system"}}}

    def vs(name: str, options: dict[str, Any] | None) -> dict[str, Any]:
        host: dict[str, Any] = {
            "domains": [f"{name}.bench"],
            "routes": [{"matchers": [{"prefix": "/"}], "routeAction": to_upstream}],
        }
        if options:
            host["options"] = options
        return {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "VirtualService",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"virtualHost": host},
        }

    security = {
        "jwt": {
            "providers": {"p": {"issuer": ISSUER, "jwks": {"local": {"key": key.public_pem()}}}}
        },
        "rbac": {
            "policies": {
                "users": {
                    "permissions": {"methods": ["GET"], "pathPrefix": "/"},
                    "principals": [{"jwtPrincipal": {"claims": {"role": "user"}}}],
                }
            }
        },
    }
    upstream = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": "hello", "namespace": "gw-system"},
        "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": upstream_port}]}},
    }
    return [upstream, vs("secure", security), vs("plain", None)]


def envoy_child(parent: int) -> int:
    """The pid of the `envoy` process `gw up` (pid `parent`) runs."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == parent and comm.startswith("envoy"):
            return int(entry.name)
    raise RuntimeError("gw up runs no envoy")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    assert match, text
    return float(match.group(1)) * _UNITS[match.group(2)]


def run_wrk(target: Target, seconds: int, connections: int) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for name, value in target.headers.items():
        # wrk replaces its own Host header only when it is spelled `Host`.
        command += ["-H", f"{name.title()}: {value}"]
    cpu_before = cpu_seconds(target.pid)
    output = subprocess.run(
        [*command, target.url], capture_output=True, text=True, check=True
    ).stdout
    cpu = cpu_seconds(target.pid) - cpu_before
    if "Non-2xx" in output or "Socket errors" in output:
        raise RuntimeError(f"not every response was 2xx:\n{output}")
    requests = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", output, re.MULTILINE))
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),  # type: ignore[union-attr]
        "p50_ms": _ms(latency["50"]),
        "p99_ms": _ms(latency["99"]),
        "cpu_us_per_req": cpu / requests * 1e6,
        "requests": requests,
    }


def check_answers(targets: dict[str, Target], guest_token: str) -> None:
    """Every scenario answers 200; the secured ones refuse what they must, identically."""
    for name, target in targets.items():
        response = httpx.get(target.url, headers=target.headers, timeout=5)
        assert response.status_code == 200, (name, response.status_code, response.text)
        if name.endswith("jwt-rbac"):
            host = {"host": target.headers["host"]}
            missing = httpx.get(target.url, headers=host, timeout=5)
            assert (missing.status_code, missing.text) == (401, "Jwt is missing"), name
            guest = httpx.get(
                target.url, headers={**host, "authorization": f"Bearer {guest_token}"}, timeout=5
            )
            assert (guest.status_code, guest.text) == (403, "RBAC: access denied"), name


def summarize(targets: dict[str, Target]) -> dict[str, Any]:
    medians = {
        name: {k: statistics.median(r[k] for r in t.runs) for k in t.runs[0]}
        for name, t in targets.items()
    }

    def ratio(a: str, b: str) -> dict[str, float]:
        """The median over repetitions of a/b within each repetition: paired, so that a
        busy moment of the machine hits both sides of a ratio alike."""
        keys = ("rps", "p50_ms", "p99_ms", "cpu_us_per_req")
        pairs = list(zip(targets[a].runs, targets[b].runs, strict=True))
        return {k: round(statistics.median(x[k] / y[k] for x, y in pairs), 3) for k in keys}

    ratios = {
        "gw-jwt-rbac / envoy-jwt-rbac": ratio("gw-jwt-rbac", "envoy-jwt-rbac"),
        "gw-plain / envoy-plain": ratio("gw-plain", "envoy-plain"),
        "gw-jwt-rbac / gw-plain": ratio("gw-jwt-rbac", "gw-plain"),
        "envoy-jwt-rbac / envoy-plain": ratio("envoy-jwt-rbac", "envoy-plain"),
    }
    return {
        "scenarios": {
            name: {"runs": t.runs, "median": {k: round(v, 3) for k, v in medians[name].items()}}
            for name, t in targets.items()
        },
        "ratios": ratios,
        "goal": {
            "text": "gw with JWT+RBAC within 5% of hand-written Envoy (requests/s)",
            "met": ratios["gw-jwt-rbac / envoy-jwt-rbac"]["rps"] >= 0.95,
            "cpu_within_5_percent": ratios["gw-jwt-rbac / envoy-jwt-rbac"]["cpu_us_per_req"]
            <= 1.05,
        },
    }


def markdown(result: dict[str, Any]) -> str:
    s, host = result["settings"], result["machine"]
    lines = [
        "# JWT + RBAC benchmark",
        "",
        f"`python -m bench.jwt` on {host['date']}, {host['cpus']} CPUs, Envoy {host['envoy']}. "
        f"wrk -t1 -c{s['connections']}, {s['seconds']}s per run, {s['reps']} interleaved "
        "repetitions (order rotated); medians. Every proxy runs one worker; the upstream is an "
        "Envoy answering by itself. CPU is the proxy process's own time per request.",
        "",
        "| scenario | req/s (min–max) | p50 ms | p99 ms | proxy CPU µs/req (min–max) |",
        "|---|---|---|---|---|",
    ]
    for name, data in result["scenarios"].items():
        m, runs = data["median"], data["runs"]
        rps = [r["rps"] for r in runs]
        cpu = [r["cpu_us_per_req"] for r in runs]
        lines.append(
            f"| {name} | {m['rps']:,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) | "
            f"{m['p50_ms']:.2f} | {m['p99_ms']:.2f} | "
            f"{m['cpu_us_per_req']:.1f} ({min(cpu):.1f}–{max(cpu):.1f}) |"
        )
    lines += [
        "",
        "Ratios: the median over repetitions of the ratio within each repetition.",
        "",
        "| ratio | req/s | p50 | p99 | CPU/req |",
        "|---|---|---|---|---|",
    ]
    for name, r in result["ratios"].items():
        lines.append(
            f"| {name} | {r['rps']:.3f} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} | "
            f"{r['cpu_us_per_req']:.3f} |"
        )
    goal = result["goal"]
    cpu_goal = "within" if goal["cpu_within_5_percent"] else "not within"
    lines += [
        "",
        f"Goal — {goal['text']}: **{'met' if goal['met'] else 'not met'}**; proxy CPU per "
        f"request {cpu_goal} 5%.",
        "",
        "wrk, the proxies and the upstream share the machine's cores (and, when this was run, "
        "other jobs did too), so single runs swing widely; compare the paired ratios, and "
        "prefer CPU per request, which contention disturbs least.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=2, help="seconds per run")
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    key = SigningKey("RSA")
    token = key.token(ISSUER, role="user", exp=2_000_000_000)
    guest = key.token(ISSUER, role="guest", exp=2_000_000_000)
    jwks = json.dumps({"keys": [key.jwk()]})
    with tempfile.TemporaryDirectory(prefix="gw-bench-") as tmp:
        work = Path(tmp)
        hello_port, hello_admin = free_port(), free_port()
        processes = [
            start_envoy(
                UPSTREAM.format(admin=hello_admin, port=hello_port, **_TYPES),
                work,
                "upstream",
                hello_admin,
            )
        ]
        ports = {"admin": free_port(), "secure": free_port(), "plain": free_port()}
        handwritten = HANDWRITTEN.format(
            upstream=hello_port, issuer=ISSUER, jwks=jwks, **ports, **_TYPES
        )
        processes.append(start_envoy(handwritten, work, "handwritten", ports["admin"]))
        folder = work / "config"
        folder.mkdir()
        (folder / "bench.yaml").write_text(yaml.safe_dump_all(gw_manifests(key, hello_port)))
        gw = GwUp(folder, work / "home", "--envoy-log-level", "error", "--log-level", "warning")
        try:
            wait_until(
                lambda: (
                    httpx.get(gw.url, headers={"host": "plain.bench"}, timeout=1).status_code == 200
                ),
                what="gw to route",
            )
            gw_envoy = envoy_child(gw.process.popen.pid)
            handwritten_pid = processes[1].popen.pid
            bearer = {"authorization": f"Bearer {token}"}
            targets = {
                "gw-jwt-rbac": Target(
                    gw.url + "/bench", {"host": "secure.bench", **bearer}, gw_envoy
                ),
                "gw-plain": Target(gw.url + "/bench", {"host": "plain.bench"}, gw_envoy),
                "envoy-jwt-rbac": Target(
                    f"http://127.0.0.1:{ports['secure']}/bench",
                    {"host": "secure.bench", **bearer},
                    handwritten_pid,
                ),
                "envoy-plain": Target(
                    f"http://127.0.0.1:{ports['plain']}/bench",
                    {"host": "plain.bench"},
                    handwritten_pid,
                ),
            }
            check_answers(targets, guest)
            for target in targets.values():  # warm up connections and the token cache
                run_wrk(target, 1, args.connections)
            for rep in range(args.reps):
                order = SCENARIOS[rep % len(SCENARIOS) :] + SCENARIOS[: rep % len(SCENARIOS)]
                for name in order:
                    run = run_wrk(targets[name], args.duration, args.connections)
                    targets[name].runs.append(run)
                    print(
                        f"rep {rep + 1} {name:15} {run['rps']:9.0f} req/s  "
                        f"p50 {run['p50_ms']:.2f} ms  p99 {run['p99_ms']:.2f} ms  "
                        f"cpu {run['cpu_us_per_req']:.1f} µs/req",
                        flush=True,
                    )
        finally:
            gw.stop()
            for process in processes:
                process.stop()
    version = subprocess.run([ENVOY, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"/(\d+\.\d+\.\d+)/", version)
    version = found.group(1) if found else "?"
    result = {
        "benchmark": "jwt",
        "machine": {**report.machine(), "envoy": version},
        "settings": {"seconds": args.duration, "reps": args.reps, "connections": args.connections},
        **summarize(targets),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "jwt.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "jwt.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
