"""Benchmark: requests with credentials, gw against nginx, side by side in one run: basic
auth (gw's `basicAuth` against nginx's `auth_basic`, both reading the same `htpasswd -m`
file) and API keys (gw's `apiKeyAuth` against the same route without auth).

Run from the repository root: `python -m bench.credentials [--duration 5] [--rounds 3]
[--users 100]`. It writes `bench/results/credentials.json` and `.md`.

- `nginx-plain` / `nginx-basic`: nginx (one worker) proxying to the upstream, without auth
  and with `auth_basic_user_file` (APR1 hashes, checked on every request);
- `gw-plain` / `gw-basic` / `gw-apikey`: `gw up` (Envoy, one worker) with `gw extauth` as its
  own process, hosts without auth, with an AuthConfig holding the same users (salt and hash
  split from the same file), and with one holding `--users` API keys in Secrets. The
  checks go over HTTP/1.1 (`gw extauth --http-port`, the Upstream `extauth-http`), as
  `gw up` and the Kubernetes install run them;
- `gw-basic-grpc` / `gw-apikey-grpc`: the same server, every check over gRPC (no
  `extauth-http` Upstream for their runs): what the HTTP checks save.

The upstream is nginx answering `200 hello world` from memory. wrk sends every user's
credentials in turn (a Lua script), so that gw's memory of accepted credentials holds as many
users as the run has. CPU per request is reported per process; the goal is gw's basic auth
within 3x nginx's CPU per request.
"""

from __future__ import annotations

import argparse
import base64
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx
from tests.support.ports import free_port
from tests.support.processes import GwUp, Process, gw_command, gw_env
from tests.support.wait import wait_until

from bench import oidc, peers, report
from bench.oidc import BODY, Side, _is_envoy, use_extauth
from bench.report import RESULTS

SCENARIOS = (
    "nginx-plain",
    "nginx-basic",
    "gw-plain",
    "gw-basic",
    "gw-basic-grpc",
    "gw-apikey",
    "gw-apikey-grpc",
)
RATIOS = (
    ("gw-basic", "nginx-basic"),
    ("gw-basic-grpc", "nginx-basic"),
    ("gw-basic", "gw-basic-grpc"),
    ("gw-apikey", "gw-apikey-grpc"),
    ("gw-plain", "nginx-plain"),
    ("nginx-basic", "nginx-plain"),
    ("gw-basic", "gw-plain"),
    ("gw-apikey", "gw-plain"),
)


def htpasswd(path: Path, users: int) -> dict[str, str]:
    """`users` users with `htpasswd -bm` (APR1) in `path`; returns user → password."""
    passwords = {f"user{n}": f"password-{n}" for n in range(users)}
    for n, (user, password) in enumerate(passwords.items()):
        flags = "-cbm" if n == 0 else "-bm"
        subprocess.run(
            ["htpasswd", flags, str(path), user, password], check=True, capture_output=True
        )
    return passwords


def gw_config(file: Path, keys: list[str], upstream: int) -> str:
    users = []
    for line in file.read_text().splitlines():
        user, _, line_hash = line.partition(":")
        _, _, salt, hashed = line_hash.split("$")
        users.append(f'\n          {user}: {{salt: "{salt}", hashedPassword: "{hashed}"}}')
    secrets = "".join(
        f"""
apiVersion: v1
kind: Secret
metadata: {{name: key-{n}, namespace: default, labels: {{bench: keys}}}}
type: extauth.vendor.io/apikey
stringData: {{api-key: {key}}}
---"""
        for n, key in enumerate(keys)
    )

    def host(name: str, config: str | None) -> str:
        guard = (
            f"\n    options: {{extauth: {{configRef: {{name: {config}, namespace: gw-system}}}}}}"
            if config
            else ""
        )
        return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ["{name}.bench:*"]{guard}
    routes:
    - matchers: [{{prefix: /}}]
      routeAction: {{single: {{upstream: {{name: hello, namespace: gw-system}}}}}}
---"""

    return f"""apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extauth:
    extauthzServerRef: {{name: extauth, namespace: gw-system}}
    requestTimeout: 5s
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: basic, namespace: gw-system}}
spec:
  configs:
  - basicAuth:
      realm: bench
      apr:
        users:{"".join(users)}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: keys, namespace: gw-system}}
spec:
  configs:
  - apiKeyAuth: {{labelSelector: {{bench: keys}}}}
---{secrets}
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: hello, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {upstream}}}]}}}}
---{host("plain", None)}{host("basic", "basic")}{host("apikey", "keys")}"""


def nginx_basic_config(port: int, upstream: int, workdir: Path, file: Path) -> str:
    """nginx's reverse proxy config with `auth_basic` on `/`."""
    config = peers.nginx_proxy_config(port, upstream, workdir)
    return config.replace(
        "        location / {\n",
        f'        location / {{\n            auth_basic "bench";\n'
        f"            auth_basic_user_file {file};\n",
    )


class Bench:
    def __init__(self, work: Path, users: int) -> None:
        self.work = work
        self.stoppable: list[Any] = []
        self.sides: dict[str, Side] = {}
        try:
            self._start(users)
        except BaseException:
            self.stop()
            raise

    def _keep(self, process: Any) -> Any:
        self.stoppable.append(process)
        return process

    def _start(self, users: int) -> None:
        work = self.work
        file = work / "htpasswd"
        passwords = htpasswd(file, users)
        os.chmod(file, 0o644)  # nginx's worker reads it as nobody
        basic = [
            "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in passwords.items()
        ]
        keys = [f"bench-key-{n:04d}-{'x' * 24}" for n in range(users)]
        up = free_port()
        nginx_up = peers.nginx_upstream_config(up, work / "upstream")
        self._keep(peers.start_nginx("upstream", nginx_up, work, up))
        for name, auth in (("nginx-plain", False), ("nginx-basic", True)):
            port = free_port()
            config = (
                nginx_basic_config(port, up, work / name, file)
                if auth
                else peers.nginx_proxy_config(port, up, work / name)
            )
            peer = self._keep(peers.start_nginx(name, config, work, port))
            script = peers.rotating_header(work / f"{name}.lua", "Authorization", basic, "/bench")
            self.sides[name] = Side(
                name,
                peer.url + "bench",
                {"Host": "nginx.bench"},
                {"proxy": peer.pid},
                basic,
                script if auth else None,
            )
        self._start_gw(file, keys, basic, up)

    def _start_gw(self, file: Path, keys: list[str], basic: list[str], upstream: int) -> None:
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
        port, http_port = free_port(), free_port()
        command = gw_command(
            *("extauth", "--xds", f"127.0.0.1:{gw.xds_port}", "--bind", "127.0.0.1"),
            *("--port", str(port), "--http-port", str(http_port), "--log-level", "warning"),
        )
        extauth = self._keep(Process(command, gw_env(self.work / "home"), self.work / "ea.log"))
        (folder / "bench.yaml").write_text(gw_config(file, keys, upstream))
        use_extauth(gw, folder, port, http_port)
        for name in ("plain", "basic", "apikey"):
            gw.wait_status(f"VirtualService default.{name}", "Accepted")
        envoy = next(p for p in peers.tree(gw.process.popen.pid)[1:] if _is_envoy(p))
        pids = {"proxy": envoy, "auth": extauth.popen.pid}
        for name, header, values, checks in (
            ("gw-plain", "", [], None),
            ("gw-basic", "Authorization", basic, http_port),
            ("gw-basic-grpc", "Authorization", basic, None),
            ("gw-apikey", "api-key", keys, http_port),
            ("gw-apikey-grpc", "api-key", keys, None),
        ):
            host = f"{name.removeprefix('gw-').removesuffix('-grpc')}.bench:{gw.http_port}"
            script = (
                peers.rotating_header(self.work / f"{name}.lua", header, values, "/bench")
                if values
                else None
            )
            self.sides[name] = Side(
                name,
                gw.url + "/bench",
                {"Host": host},
                pids if values else {"proxy": envoy},
                values,
                script,
                prepare=(
                    (lambda h=checks: use_extauth(gw, folder, port, h))  # type: ignore[misc]
                    if values
                    else None
                ),
            )

    def check(self) -> None:
        """Each side answers a request with valid credentials with the upstream's 200 (once
        gw's extauth server has its configuration), and refuses one without them (401)."""
        for side in self.sides.values():
            if side.prepare is not None:
                side.prepare()
            header = "api-key" if side.name.startswith("gw-apikey") else "authorization"
            valid = {**side.headers, **({header: side.cookies[0]} if side.script else {})}
            ok = wait_until(
                lambda url=side.url, h=valid: _ok(url, h),  # type: ignore[misc]
                timeout=30,
                what=f"{side.name} to answer 200",
            )
            assert ok.text == BODY, (side.name, ok.text)
            if side.script:
                refused = httpx.get(side.url, headers=side.headers)
                assert refused.status_code == 401, (side.name, refused.status_code)

    def stop(self) -> None:
        for process in reversed(self.stoppable):
            try:
                process.stop()
            except Exception as error:  # keep stopping the others
                print(f"stopping {process}: {error}")


def _ok(url: str, headers: dict[str, str]) -> httpx.Response | None:
    answer = httpx.get(url, headers=headers)
    return answer if answer.status_code == 200 else None


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    lines = [
        "# Basic auth and API keys: gw extauth against nginx auth_basic",
        "",
        f"`python -m bench.credentials --duration {s['seconds']:g} --rounds {s['rounds']} "
        f"--users {s['users']}`, {result['started']}; wrk -t1 -c{s['connections']} sending "
        f"{s['users']} users' credentials in turn; the same htpasswd file for both; gw's "
        "checks over HTTP/1.1 (the extauth server's `--http-port`, the Upstream "
        "`extauth-http`), the `-grpc` rows the same server over gRPC; medians over the "
        f"rounds. Load average at start {result['load_average']['start']}, at end "
        f"{result['load_average']['end']}.",
        "",
        *oidc.scenario_table(result),
    ]
    lines += [
        "",
        "Ratios (median of the per-round ratios):",
        "",
        *report.ratio_table(result["ratios"]),
    ]
    return "\n".join(lines) + "\n"


def run(seconds: float, rounds: int, connections: int, users: int) -> dict[str, Any]:
    absent = peers.missing("nginx", "wrk")
    if absent:
        raise SystemExit(f"not installed: {', '.join(absent)}: run scripts/bench-deps")
    started, load_start = peers.now(), peers.load_average()
    with tempfile.TemporaryDirectory(prefix="gw-bench-credentials-") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o755)
        bench = Bench(work, users)
        try:
            bench.check()
            oidc.measure_rounds(bench.sides, SCENARIOS, rounds, seconds, connections)
        finally:
            bench.stop()
    return {
        **peers.run_record("credentials", started, load_start),
        "settings": {
            "seconds": seconds,
            "rounds": rounds,
            "connections": connections,
            "users": users,
            "order": list(SCENARIOS),
        },
        **oidc.summarize(bench.sides, RATIOS),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=5, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.duration, args.rounds, args.connections, args.users)
    report.write_part(args.out, "credentials", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
