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
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from tests.support.ports import free_port
from tests.support.processes import GwUp
from tests.support.tokens import SigningKey
from tests.support.wait import wait_until

from bench import peers, report

RESULTS = report.RESULTS
ISSUER = "https://issuer.bench"
#: Compared pairs sit next to each other, so that they run close in time in every rotation.
SCENARIOS = ("gw-jwt-rbac", "envoy-jwt-rbac", "gw-plain", "envoy-plain")
JWT_AUTHN = "type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication"
RBAC = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"
#: Path normalisation, as gw's listeners do it.
NORMALIZE = """
          normalize_path: true
          merge_slashes: true"""


def handwritten_config(*, admin: int, secure: int, plain: int, upstream: int, jwks: str) -> str:
    """The hand-written baseline (ENVOY-NOTES §2): `secure` checks the JWT (with the
    verification cache) and an RBAC policy on its verified `role` claim; `plain` is the same
    listener without the two filters. Both route to `upstream`."""
    checks = f"""
          - name: envoy.filters.http.jwt_authn
            typed_config:
              "@type": {JWT_AUTHN}
              providers:
                p:
                  issuer: {ISSUER}
                  local_jwks: {{inline_string: '{jwks}'}}
                  payload_in_metadata: p
                  jwt_cache_config: {{jwt_cache_size: 1000}}
              rules: [{{match: {{prefix: /}}, requires: {{provider_name: p}}}}]
          - name: envoy.filters.http.rbac
            typed_config:
              "@type": {RBAC}
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
                          value: {{string_match: {{exact: user}}}}"""
    listeners = peers.envoy_listener(
        "secure", secure, filters=checks, options=NORMALIZE
    ) + peers.envoy_listener("plain", plain, options=NORMALIZE)
    return peers.envoy_static(admin, listeners, upstream=upstream)


def upstream_config(*, admin: int, port: int) -> str:
    """The upstream: an Envoy answering `200 hello world` by itself."""
    hello = 'direct_response: {status: 200, body: {inline_string: "hello world\\n"}}'
    return peers.envoy_static(admin, peers.envoy_listener("hello", port, hello))


@dataclass
class Target:
    url: str
    headers: dict[str, str]
    pid: int
    runs: list[dict[str, float]] = field(default_factory=list)


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
    for pid in peers.tree(parent)[1:]:
        if Path(f"/proc/{pid}/comm").read_text().strip().startswith("envoy"):
            return pid
    raise RuntimeError("gw up runs no envoy")


def run_wrk(target: Target, seconds: int, connections: int) -> dict[str, float]:
    # wrk replaces its own Host header only when it is spelled `Host`.
    headers = {name.title(): value for name, value in target.headers.items()}
    cpu_before = peers.cpu_seconds([target.pid])
    run = peers.wrk(target.url, headers, seconds, connections)
    cpu = peers.cpu_seconds([target.pid]) - cpu_before
    if run["non_2xx"] or run["socket_errors"]:
        raise RuntimeError(f"not every response was 2xx: {run}")
    return {
        "rps": run["rps"],
        "p50_ms": run["p50_ms"],
        "p99_ms": run["p99_ms"],
        "cpu_us_per_req": cpu / run["requests"] * 1e6,
        "requests": run["requests"],
    }


def measure(
    targets: dict[str, Target],
    scenarios: tuple[str, ...],
    reps: int,
    seconds: int,
    connections: int,
) -> None:
    """`reps` runs of every scenario, interleaved, the order rotated every repetition (so
    that a busy moment of the machine hits every scenario alike)."""
    for rep in range(reps):
        order = scenarios[rep % len(scenarios) :] + scenarios[: rep % len(scenarios)]
        for name in order:
            run = run_wrk(targets[name], seconds, connections)
            targets[name].runs.append(run)
            print(
                f"rep {rep + 1} {name:15} {run['rps']:9.0f} req/s  "
                f"p50 {run['p50_ms']:.2f} ms  p99 {run['p99_ms']:.2f} ms  "
                f"cpu {run['cpu_us_per_req']:.1f} µs/req",
                flush=True,
            )


def scenario_rows(scenarios: dict[str, Any]) -> list[str]:
    """The Markdown table of scenarios: medians, with the min–max of req/s and CPU."""
    lines = [
        "| scenario | req/s (min–max) | p50 ms | p99 ms | proxy CPU µs/req (min–max) |",
        "|---|---|---|---|---|",
    ]
    for name, data in scenarios.items():
        m, runs = data["median"], data["runs"]
        rps = [r["rps"] for r in runs]
        cpu = [r["cpu_us_per_req"] for r in runs]
        lines.append(
            f"| {name} | {m['rps']:,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) | "
            f"{m['p50_ms']:.2f} | {m['p99_ms']:.2f} | "
            f"{m['cpu_us_per_req']:.1f} ({min(cpu):.1f}–{max(cpu):.1f}) |"
        )
    return lines


def arguments(doc: str | None, argv: list[str] | None) -> argparse.Namespace:
    """The options of a paired-scenario part: --duration, --reps, --connections, --out."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--duration", type=int, default=2, help="seconds per run")
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser.parse_args(argv)


def finish(
    part: str,
    args: argparse.Namespace,
    summary: dict[str, Any],
    render: Callable[[dict[str, Any]], str],
) -> int:
    """Writes the part's results (with the machine and the run's settings) and prints them."""
    machine = report.machine()
    result = {
        "benchmark": part,
        "machine": {**machine, "envoy": machine["versions"]["envoy"]},
        "settings": {"seconds": args.duration, "reps": args.reps, "connections": args.connections},
        **summary,
    }
    report.write_part(args.out, part, result, render(result))
    print(render(result))
    return 0


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
        *scenario_rows(result["scenarios"]),
    ]
    lines += [
        "",
        "Ratios: the median over repetitions of the ratio within each repetition.",
        "",
        *report.ratio_table(result["ratios"]),
    ]
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
    args = arguments(__doc__, argv)

    key = SigningKey("RSA")
    token = key.token(ISSUER, role="user", exp=2_000_000_000)
    guest = key.token(ISSUER, role="guest", exp=2_000_000_000)
    jwks = json.dumps({"keys": [key.jwk()]})
    with tempfile.TemporaryDirectory(prefix="gw-bench-") as tmp:
        work = Path(tmp)
        hello_port = free_port()
        hello = upstream_config(admin=free_port(), port=hello_port)
        peer_envoys = [peers.start_envoy("upstream", hello, work, hello_port)]
        ports = {"admin": free_port(), "secure": free_port(), "plain": free_port()}
        handwritten = handwritten_config(**ports, upstream=hello_port, jwks=jwks)
        peer_envoys.append(peers.start_envoy("handwritten", handwritten, work, ports["secure"]))
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
            handwritten_pid = peer_envoys[1].pid
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
            measure(targets, SCENARIOS, args.reps, args.duration, args.connections)
        finally:
            gw.stop()
            for envoy in peer_envoys:
                envoy.stop()
    return finish("jwt", args, summarize(targets), markdown)


if __name__ == "__main__":
    raise SystemExit(main())
