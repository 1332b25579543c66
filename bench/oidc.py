"""Benchmark: requests with logged-in OIDC sessions, gw against Apache `mod_auth_openidc`,
side by side in one run.

Run from the repository root: `python -m bench.oidc [--duration 5] [--rounds 3]
[--sessions 1000]`. It writes `bench/results/oidc.json` and `.md`.

Both sides log in at the same provider (oidc-provider-mock, tests/support/oidc_provider.py),
keep their sessions in the same Redis, and send to the same upstream (nginx answering
`200 hello world` from memory):

- `gw-oidc-redis`: `gw up` (Envoy, one worker) and `gw extauth` as its own process, a
  VirtualService guarded by an AuthConfig with Redis sessions (the server keeps what it
  read from Redis for 2 s, its default), checked over HTTP/1.1 (`--http-port`, the
  Upstream `extauth-http`), as `gw up` does;
- `gw-oidc-redis-pass`: the same, with session passes on (Settings
  `extauth.sessionPass`, a gw extension, off by default: `bench/oidc_pass.py`): each
  session sends the pass its first answer set, and Envoy lets it through by itself;
- `gw-oidc-redis-grpc`: the same server, every check over gRPC (no `extauth-http`
  Upstream): what the HTTP checks save;
- `gw-oidc-redis-nocache`: the same as the first with a `gw extauth --session-cache 0`,
  which reads Redis on every check, as Apache does (the extauth Upstreams are pointed at
  it for its runs);
- `apache-oidc-redis`: Apache (event MPM, one child process) with mod_auth_openidc,
  `OIDCSessionType server-cache` and `OIDCCacheType redis`;
- `gw-plain` and `apache-plain`: the same proxies without auth, for the overhead.

Each side logs in `--sessions` times (1,000 by default) over HTTP, the redirects followed
by hand as a browser would, four logins at a time; `wrk` then sends every session's cookie
in turn (a Lua script, round robin), so that a per-session cache only helps as much as a
real population of users lets it. Before any load each side must answer a session's request
with the upstream's `200 hello world` (a redirect to the provider would be a benchmark of
redirects) and a request without one with a redirect; any answer other than 200 under load
fails the run. CPU per request is reported per side: the proxy, the auth server (gw's
extauth; Apache does both in one process) and Redis.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable
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

from bench import oidc_pass, peers, report
from bench.report import RESULTS

SCENARIOS = (
    "gw-oidc-redis",
    "gw-oidc-redis-pass",
    "apache-oidc-redis",
    "gw-oidc-redis-grpc",
    "gw-oidc-redis-nocache",
    "gw-plain",
    "apache-plain",
)
RATIOS = (
    ("gw-oidc-redis", "apache-oidc-redis"),
    ("gw-oidc-redis-pass", "apache-oidc-redis"),
    ("gw-oidc-redis-pass", "gw-oidc-redis"),
    ("gw-oidc-redis-grpc", "apache-oidc-redis"),
    ("gw-oidc-redis", "gw-oidc-redis-grpc"),
    ("gw-oidc-redis-nocache", "apache-oidc-redis"),
    ("gw-plain", "apache-plain"),
    ("gw-oidc-redis", "gw-plain"),
    ("apache-oidc-redis", "apache-plain"),
)
METRICS = ("rps", "p50_ms", "p99_ms", "cpu_us_per_req")
BODY = "hello world\n"


def gw_config(issuer: str, redis: str, port: int, upstream: int) -> str:
    """The client secret, an AuthConfig with Redis sessions, the upstream and two
    VirtualServices: `secure` (guarded) and `plain`."""

    def host(name: str, options: str) -> str:
        return f"""---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ["{name}.bench:*"]{options}
    routes:
    - matchers: [{{prefix: /}}]
      routeAction: {{single: {{upstream: {{name: hello, namespace: gw-system}}}}}}
"""

    guard = "\n    options: {extauth: {configRef: {name: oidc, namespace: gw-system}}}"
    return f"""apiVersion: v1
kind: Secret
metadata: {{name: oauth, namespace: gw-system}}
type: extauth.vendor.io/oauth
stringData: {{client-secret: bench}}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: oidc, namespace: gw-system}}
spec:
  configs:
  - oauth2:
      oidcAuthorizationCode:
        appUrl: http://secure.bench:{port}
        callbackPath: /callback
        clientId: bench-gw
        clientSecretRef: {{name: oauth, namespace: gw-system}}
        issuerUrl: {issuer}
        session: {{store: {{cookieName: sid, options: {{host: "{redis}"}}}}}}
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: hello, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {upstream}}}]}}}}
{host("secure", guard)}{host("plain", "")}"""


LOGINS_AT_ONCE = 4
#: A login that fails (the provider, a development server, overloaded by the logins
#: running beside it) is started again, at most this many times in all.
LOGIN_ATTEMPTS = 3


def extauth_upstream(port: int, name: str = "extauth") -> str:
    return f"""apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}}}
"""


def use_extauth(
    gw: GwUp, folder: Path, port: int, http_port: int | None, *, passes: bool | None = None
) -> None:
    """Point the extauth Upstream of `gw`'s `folder` at the server on `port`, and
    `extauth-http` at its HTTP checks on `http_port` (None: no such Upstream, every check
    over gRPC), with the Settings' session passes on or off (None: the Settings are left
    as they are); wait until Envoy has them."""
    if passes is not None:
        (folder / "settings.yaml").write_text(oidc_pass.settings(passes))
    (folder / "extauth-upstream.yaml").write_text(extauth_upstream(port))
    http = folder / "extauth-http-upstream.yaml"
    if http_port is None:
        http.unlink(missing_ok=True)
    else:
        http.write_text(extauth_upstream(http_port, "extauth-http"))

    def hosts(clusters: str, cluster: str) -> set[str]:
        prefix = f"{cluster}::127.0.0.1:"
        return {line.split("::")[1] for line in clusters.splitlines() if line.startswith(prefix)}

    def applied() -> bool:
        clusters = httpx.get(gw.proxy_admin_url + "/clusters", timeout=5).text
        listeners = httpx.get(gw.proxy_admin_url + "/config_dump", timeout=5).text
        http_filter = "gw.ext_authz.http" in listeners
        return (
            hosts(clusters, "extauth_gw-system") == {f"127.0.0.1:{port}"}
            and hosts(clusters, "extauth-http_gw-system")
            == ({f"127.0.0.1:{http_port}"} if http_port else set())
            and http_filter == (http_port is not None)
            and (passes is None or oidc_pass.pass_filter_on(listeners) == passes)
        )

    wait_until(applied, timeout=30, what=f"Envoy to use the extauth server on {port}")


@dataclass
class Side:
    """One scenario: where wrk sends, with which headers, and whose CPU counts."""

    name: str
    url: str
    headers: dict[str, str]
    pids: dict[str, int]  # role -> root pid of a process tree
    #: The sessions' Cookie headers, sent in turn (none: no auth).
    cookies: list[str] = field(default_factory=list)
    script: Path | None = None
    #: Run before each measurement (points gw's extauth Upstream at this side's server).
    prepare: Callable[[], None] | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)

    def measure(self, seconds: float, connections: int) -> dict[str, Any]:
        if self.prepare is not None:
            self.prepare()
        trees = {role: peers.tree(pid) for role, pid in self.pids.items()}
        before = {role: peers.cpu_seconds(pids) for role, pids in trees.items()}
        run = peers.wrk(self.url, self.headers, seconds, connections, self.script)
        if run["non_2xx"] or run["socket_errors"]:
            raise RuntimeError(f"{self.name}: not every answer was a 200: {run}")
        n = max(run["requests"], 1)
        cpu = {r: (peers.cpu_seconds(p) - before[r]) / n * 1e6 for r, p in trees.items()}
        return {**{k: run[k] for k in ("rps", "p50_ms", "p99_ms", "requests")},
                "cpu_us_per_req": sum(cpu.values()), "cpu_us_by_process": cpu}  # fmt: skip


class Bench:
    """Every process of the comparison; `stop()` ends them all, whatever got started."""

    def __init__(self, work: Path, sessions: int) -> None:
        self.work = work
        self.sessions = sessions
        self.stoppable: list[Any] = []
        self.sides: dict[str, Side] = {}
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        work = self.work
        self.redis = self._keep(RedisServer(work))
        self.idp = self._keep(OidcProvider(work))
        up_port = free_port()
        self.upstream = self._keep(
            peers.start_nginx(
                "upstream", peers.nginx_upstream_config(up_port, work / "upstream"), work, up_port
            )
        )
        self._start_gw(up_port)
        self._start_apache(up_port)

    def _keep(self, process: Any) -> Any:
        self.stoppable.append(process)
        return process

    def _extauth(self, gw: GwUp, *extra: str) -> tuple[Process, int, int]:
        """A `gw extauth` with its gRPC port and its HTTP checks' port."""
        port, http_port = free_port(), free_port()
        command = gw_command(
            *("extauth", "--xds", f"127.0.0.1:{gw.xds_port}", "--bind", "127.0.0.1"),
            *("--port", str(port), "--http-port", str(http_port), "--log-level", "warning"),
            *extra,
        )
        log = self.work / f"extauth-{port}.log"
        process = self._keep(Process(command, gw_env(self.work / "home"), log))
        return process, port, http_port

    def _start_gw(self, upstream: int) -> None:
        folder = self.work / "config"
        folder.mkdir()
        gw = self._keep(
            GwUp(
                folder,
                self.work / "home",
                "--extauth-port",
                "0",
                "--envoy-log-level",
                "error",
                "--log-level",
                "warning",
            )
        )
        cached, cached_port, cached_http = self._extauth(gw)
        uncached, uncached_port, uncached_http = self._extauth(gw, "--session-cache", "0")
        self.gw, self.folder = gw, folder
        (folder / "bench.yaml").write_text(
            gw_config(self.idp.issuer, self.redis.address, gw.http_port, upstream)
        )
        self.use_extauth(cached_port, cached_http)
        for name in ("secure", "plain"):
            gw.wait_status(f"VirtualService default.{name}", "Accepted")
        envoy = next(p for p in peers.tree(gw.process.popen.pid)[1:] if _is_envoy(p))
        secure = f"secure.bench:{gw.http_port}"
        cookies = self.logins(gw.url, secure)
        for name, server, port, http_port in (
            ("gw-oidc-redis", cached, cached_port, cached_http),
            ("gw-oidc-redis-pass", cached, cached_port, cached_http),
            ("gw-oidc-redis-grpc", cached, cached_port, None),
            ("gw-oidc-redis-nocache", uncached, uncached_port, uncached_http),
        ):
            pids = {"proxy": envoy, "auth": server.popen.pid, "redis": self._redis_pid()}
            self.sides[name] = side = Side(
                name,
                gw.url + "/bench",
                {"Host": secure},
                pids,
                cookies,
                peers.rotating_header(self.work / f"{name}.lua", "Cookie", cookies, "/bench"),
                prepare=lambda p=port, h=http_port: self.use_extauth(p, h),  # type: ignore[misc]
            )
            if name == "gw-oidc-redis-pass":
                side.prepare = lambda s=side, p=port, h=http_port: self.collect_passes(s, p, h)
        self.sides["gw-plain"] = Side(
            "gw-plain",
            gw.url + "/bench",
            {"Host": f"plain.bench:{gw.http_port}"},
            {"proxy": envoy},
        )

    def collect_passes(self, side: Side, port: int, http_port: int | None) -> None:
        """Passes on, then every session's pass collected (`oidc_pass`) for `side`'s run;
        one request with a pass must not reach the extauth server."""
        self.use_extauth(port, http_port, passes=True)
        sessions = self.sides["gw-oidc-redis"].cookies
        host = side.headers["Host"]
        wait_until(
            lambda: oidc_pass.hands_passes(self.gw.url, host, sessions[0]),
            timeout=30,
            what="the extauth server to hand out session passes",
        )
        side.cookies = oidc_pass.with_passes(self.gw.url, host, sessions)
        assert side.script is not None
        peers.rotating_header(side.script, "Cookie", side.cookies, "/bench")
        before = self.checks_asked()
        answer = httpx.get(side.url, headers={**side.headers, "Cookie": side.cookies[0]}, timeout=5)
        assert (answer.status_code, answer.text) == (200, BODY), answer
        assert self.checks_asked() == before, "a request with a pass reached the extauth server"

    def checks_asked(self) -> int:
        stats = httpx.get(self.gw.proxy_admin_url + "/stats", timeout=5).text
        return oidc_pass.checks_asked(stats)

    def use_extauth(self, port: int, http_port: int | None, passes: bool = False) -> None:
        """`use_extauth` for this bench's gw, with session passes on or off."""
        use_extauth(self.gw, self.folder, port, http_port, passes=passes)

    def _start_apache(self, upstream: int) -> None:
        port = free_port()
        host = f"apache.bench:{port}"
        oidc = peers.Oidc(self.idp.issuer, "bench-apache", "bench", self.redis.address, host)
        config = peers.apache_config(port, upstream, self.work / "apache-oidc", oidc)
        secure = self._keep(peers.start_apache("apache-oidc", config, self.work, port))
        cookies = self.logins(secure.url.rstrip("/"), host)
        self.sides["apache-oidc-redis"] = Side(
            "apache-oidc-redis",
            secure.url + "bench",
            {"Host": host},
            {"proxy": secure.pid, "redis": self._redis_pid()},
            cookies,
            peers.rotating_header(self.work / "apache.lua", "Cookie", cookies, "/bench"),
        )
        port = free_port()
        config = peers.apache_config(port, upstream, self.work / "apache-plain", None)
        plain = self._keep(peers.start_apache("apache-plain", config, self.work, port))
        self.sides["apache-plain"] = Side(
            "apache-plain",
            plain.url + "bench",
            {"Host": f"apache.bench:{port}"},
            {"proxy": plain.pid},
        )

    def _redis_pid(self) -> int:
        assert self.redis.process is not None
        return int(self.redis.process.popen.pid)

    def logins(self, url: str, host: str) -> list[str]:
        """`self.sessions` sessions of distinct users, logged in `LOGINS_AT_ONCE` at a time."""
        with ThreadPoolExecutor(LOGINS_AT_ONCE) as pool:
            return list(
                pool.map(
                    lambda n: self.login(url, host, f"user{n}@example.com"), range(self.sessions)
                )
            )

    def login(self, url: str, host: str, user: str) -> str:
        """Log in as `user` at the provider through `url` (as virtual host `host`), following
        the redirects by hand; returns the Cookie header of the session."""
        for attempt in range(1, LOGIN_ATTEMPTS + 1):
            agent = Agent(url, host)
            start = agent.start_login("/")
            callback = self.idp.login(start.headers["location"], user)
            done = agent.get(callback)
            if done.status_code == 302:
                return "; ".join(f"{k}={v}" for k, v in agent.cookies.items())
            if attempt == LOGIN_ATTEMPTS:
                raise RuntimeError(f"{host}: login of {user}: {done.status_code} {done.text}")
        raise AssertionError("unreachable")

    def check(self) -> None:
        """Each side answers with the upstream's 200 — with a session where one is needed,
        the first and the last — and the guarded sides redirect a request without one to
        the provider."""
        for side in self.sides.values():
            if side.prepare is not None:
                side.prepare()
            agent = Agent(side.url.rsplit("/", 1)[0], side.headers["Host"])
            for cookie in side.cookies[:1] + side.cookies[-1:] or [""]:
                jar = dict(p.split("=", 1) for p in cookie.split("; ") if p)
                answer = agent.get("/bench", cookies=jar)
                assert (answer.status_code, answer.text) == (200, BODY), (side.name, answer)
            if side.cookies:
                anonymous = agent.get("/bench", cookies={})
                assert anonymous.status_code == 302, (side.name, anonymous.status_code)
                assert anonymous.headers["location"].startswith(self.idp.issuer), side.name

    def stop(self) -> None:
        for process in reversed(self.stoppable):
            try:
                process.stop()
            except Exception as error:  # keep stopping the others
                print(f"stopping {process}: {error}")


def _is_envoy(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip().startswith("envoy")
    except OSError:
        return False


def summarize(
    sides: dict[str, Side], ratios: tuple[tuple[str, str], ...] = RATIOS
) -> dict[str, Any]:
    scenarios = {}
    for name, side in sides.items():
        scenarios[name] = {
            "median": {k: round(statistics.median(r[k] for r in side.runs), 3) for k in METRICS},
            "cpu_us_by_process": {
                role: round(statistics.median(r["cpu_us_by_process"][role] for r in side.runs), 1)
                for role in side.pids
            },
            "min_rps": round(min(r["rps"] for r in side.runs)),
            "max_rps": round(max(r["rps"] for r in side.runs)),
            "runs": side.runs,
        }
    by_ratio = {
        f"{a} / {b}": {
            k: round(
                statistics.median(
                    x[k] / y[k] for x, y in zip(sides[a].runs, sides[b].runs, strict=True)
                ),
                3,
            )
            for k in METRICS
        }
        for a, b in ratios
    }
    return {"scenarios": scenarios, "ratios": by_ratio}


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        "# OIDC sessions: gw extauth against Apache mod_auth_openidc",
        "",
        f"`python -m bench.oidc --duration {s['seconds']:g} --rounds {s['rounds']} "
        f"--sessions {s['sessions']}`, {result['started']}; wrk -t1 -c{s['connections']} "
        f"sending the cookies of {s['sessions']:,} logged-in sessions in turn; "
        "same provider, Redis and upstream for both; medians over the rounds. Load average "
        f"at start {result['load_average']['start']}, at end {result['load_average']['end']}.",
        "",
        *scenario_table(result),
    ]
    lines += [
        "",
        "Ratios (median of the per-round ratios; req/s above 1 is faster, latency and CPU "
        "below 1 are better):",
        "",
        *report.ratio_table(result["ratios"]),
    ]
    return "\n".join(lines) + "\n"


def scenario_table(result: dict[str, Any]) -> list[str]:
    """The Markdown table of a result's scenarios: req/s, latency, CPU by process."""
    lines = [
        "| scenario | req/s (min–max) | p50 ms | p99 ms | CPU µs/req, total | by process |",
        "|---|---|---|---|---|---|",
    ]
    for name, data in result["scenarios"].items():
        m = data["median"]
        parts = ", ".join(f"{k} {v:.0f}" for k, v in data["cpu_us_by_process"].items())
        lines.append(
            f"| {name} | {m['rps']:,.0f} ({data['min_rps']:,}–{data['max_rps']:,}) | "
            f"{m['p50_ms']:.2f} | {m['p99_ms']:.2f} | {m['cpu_us_per_req']:.1f} | {parts} |"
        )
    return lines


def measure_rounds(
    sides: dict[str, Side], order: tuple[str, ...], rounds: int, seconds: float, connections: int
) -> None:
    """A warm-up run of each side, then `rounds` rounds of every side in `order`."""
    for side in sides.values():  # warm up pools and caches
        side.measure(1, connections)
    for n in range(rounds):
        for name in order:
            result = sides[name].measure(seconds, connections)
            sides[name].runs.append(result)
            print(
                f"round {n + 1} {name:22} {result['rps']:8.0f} req/s  p99 "
                f"{result['p99_ms']:.2f} ms  cpu {result['cpu_us_per_req']:.0f} µs/req",
                flush=True,
            )


def run(seconds: float, rounds: int, connections: int, sessions: int) -> dict[str, Any]:
    absent = peers.missing("nginx", "apache2", "mod_auth_openidc", "redis-server", "wrk")
    if absent:
        raise SystemExit(f"not installed: {', '.join(absent)}: run scripts/bench-deps")
    started, load_start = peers.now(), peers.load_average()
    with tempfile.TemporaryDirectory(prefix="gw-bench-oidc-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)  # Apache's workers run as nobody when started by root
        bench = Bench(work, sessions)
        try:
            bench.check()
            measure_rounds(bench.sides, SCENARIOS, rounds, seconds, connections)
            bench.check()  # the sessions held to the end
        finally:
            bench.stop()
    return {
        **peers.run_record("oidc", started, load_start),
        "settings": {
            "seconds": seconds,
            "rounds": rounds,
            "connections": connections,
            "sessions": sessions,
            "order": list(SCENARIOS),
        },
        **summarize(bench.sides),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--sessions", type=int, default=1000, help="logged-in sessions per side")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.duration, args.rounds, args.connections, args.sessions)
    report.write_part(args.out, "oidc", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
