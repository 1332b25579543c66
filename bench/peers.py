"""The peers gw is compared with, run for real: generated configs for nginx, HAProxy, a
hand-written Envoy and Apache with mod_auth_openidc, each started in the foreground on free
loopback ports and always stopped; plus what every comparison needs — `wrk` runs, CPU time
of a process tree from /proc, and a description of the machine.

The configs are kept fair on purpose: one worker (thread or process) per proxy, keep-alive
to the upstream everywhere, no access logs, and the same upstream for all: nginx answering
`200 hello world` from memory (cheap enough never to be the bottleneck).
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from tests.support.ports import free_port
from tests.support.processes import Process
from tests.support.wait import wait_until

ENVOY = shutil.which("envoy") or str(Path(sys.executable).parent / "envoy")
SBIN = ("/usr/sbin", "/usr/local/sbin")
APACHE_MODULES = Path("/usr/lib/apache2/modules")
TICK = os.sysconf("SC_CLK_TCK")
HCM = (
    "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3."
    "HttpConnectionManager"
)
ROUTER = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"


def binary(name: str) -> str | None:
    """A peer's program, also in /usr/sbin when that is not on PATH (non-root shells)."""
    found = shutil.which(name)
    if found:
        return found
    for folder in SBIN:
        if os.access(Path(folder) / name, os.X_OK):
            return str(Path(folder) / name)
    return None


def missing(*names: str) -> list[str]:
    """Which of the peer programs (and mod_auth_openidc, as `mod_auth_openidc`) are absent."""
    absent = [n for n in names if n != "mod_auth_openidc" and binary(n) is None]
    if "mod_auth_openidc" in names and not (APACHE_MODULES / "mod_auth_openidc.so").exists():
        absent.append("mod_auth_openidc")
    return absent


# --- configs -------------------------------------------------------------------------------


def nginx_upstream_config(port: int, workdir: Path) -> str:
    """nginx as the neutral upstream: `200 hello world` from memory, keep-alive."""
    return _nginx(
        workdir,
        f"""
    server {{
        listen 127.0.0.1:{port} reuseport;
        keepalive_requests 1000000;
        location / {{ return 200 "hello world\\n"; }}
    }}""",
    )


def nginx_proxy_config(port: int, upstream: int, workdir: Path) -> str:
    """nginx as a reverse proxy, keep-alive to the upstream (HTTP/1.1, a pool of 64)."""
    return _nginx(
        workdir,
        f"""
    upstream backend {{
        server 127.0.0.1:{upstream};
        keepalive 64;
        keepalive_requests 1000000;
    }}
    server {{
        listen 127.0.0.1:{port};
        keepalive_requests 1000000;
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering on;
        }}
    }}""",
    )


def _nginx(workdir: Path, servers: str) -> str:
    return f"""daemon off;
master_process on;
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {workdir}/client_body;
    proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi;
    uwsgi_temp_path {workdir}/uwsgi;
    scgi_temp_path {workdir}/scgi;
{servers}
}}
"""


def haproxy_config(port: int, upstream: int) -> str:
    """HAProxy as a reverse proxy: one thread, HTTP mode, keep-alive both ways."""
    return f"""global
    nbthread 1
    maxconn 4096
defaults
    mode http
    option http-keep-alive
    http-reuse always
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend bench
    bind 127.0.0.1:{port}
    default_backend upstream
backend upstream
    server hello 127.0.0.1:{upstream}
"""


def envoy_config(port: int, admin: int, upstream: int) -> str:
    """The hand-written Envoy static config for plain routing: one listener, one route to
    one static cluster — what someone would write for Envoy by hand."""
    return envoy_static(admin, envoy_listener("plain", port), upstream=upstream)


#: A listener's route to the static cluster `upstream` (YAML flow).
TO_UPSTREAM = "route: {cluster: upstream}"


def envoy_static(admin: int, listeners: str, *, upstream: int | None = None) -> str:
    """A static Envoy config: admin on `admin`, the `listeners` (`envoy_listener()`s), and,
    with `upstream`, the cluster `upstream` of one endpoint at 127.0.0.1:`upstream`."""
    cluster = ""
    if upstream is not None:
        cluster = f"""
  clusters:
  - name: upstream
    type: STATIC
    connect_timeout: 5s
    load_assignment:
      cluster_name: upstream
      endpoints:
      - lb_endpoints:
        - endpoint:
            address: {{socket_address: {{address: 127.0.0.1, port_value: {upstream}}}}}"""
    return f"""
admin:
  address: {{socket_address: {{address: 127.0.0.1, port_value: {admin}}}}}
static_resources:{cluster}
  listeners:{listeners}
"""


def envoy_listener(
    name: str, port: int, action: str = TO_UPSTREAM, *, filters: str = "", options: str = ""
) -> str:
    """One listener of `envoy_static()`: an HTTP connection manager whose one virtual host
    answers `/` with `action` (YAML flow: `TO_UPSTREAM`, or a `direct_response: ...`);
    `filters` are HTTP filter items (YAML at the `http_filters` indent) ahead of the router,
    `options` more lines of the connection manager (at its indent)."""
    return f"""
  - name: {name}
    address: {{socket_address: {{address: 127.0.0.1, port_value: {port}}}}}
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": {HCM}
          stat_prefix: {name}{options}
          route_config:
            virtual_hosts:
            - name: {name}
              domains: ["*"]
              routes: [{{match: {{prefix: /}}, {action}}}]
          http_filters:{filters}
          - name: envoy.filters.http.router
            typed_config: {{"@type": {ROUTER}}}"""


@dataclass(frozen=True)
class Oidc:
    """What Apache's mod_auth_openidc needs to log users in at the provider."""

    issuer: str
    client_id: str
    client_secret: str
    redis: str  # host:port
    host: str  # the virtual host name the client uses, with the port


def apache_config(port: int, upstream: int, workdir: Path, oidc: Oidc | None) -> str:
    """Apache (event MPM, one child process of 64 threads) proxying to the upstream with
    keep-alive; with `oidc`, `/` needs a mod_auth_openidc session kept in Redis. `workdir`
    holds its pid file, logs and mutexes: `start_apache(name, ...)` uses `<work>/<name>`."""
    modules = ["mpm_event", "authn_core", "authz_core", "authz_user", "proxy", "proxy_http"]
    if oidc:
        modules.append("auth_openidc")
    loads = "\n".join(f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so" for m in modules)
    user = "User nobody\nGroup nogroup\n" if os.geteuid() == 0 else ""
    auth = ""
    if oidc:
        auth = f"""
OIDCProviderMetadataURL {oidc.issuer}/.well-known/openid-configuration
OIDCClientID {oidc.client_id}
OIDCClientSecret {oidc.client_secret}
OIDCRedirectURI http://{oidc.host}/callback
OIDCCryptoPassphrase bench-passphrase-not-a-secret
OIDCScope "openid email"
OIDCSessionType server-cache
OIDCCacheType redis
OIDCRedisCacheServer {oidc.redis}
OIDCCookieSameSite Off
OIDCSessionInactivityTimeout 3600
OIDCSessionMaxDuration 0
"""
    guard = "AuthType openid-connect\n    Require valid-user" if oidc else "Require all granted"
    return f"""ServerRoot {workdir}
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile {workdir}/httpd.pid
ErrorLog {workdir}/error.log
LogLevel warn
Mutex file:{workdir} default
DefaultRuntimeDir {workdir}
{loads}
{user}StartServers 1
ServerLimit 1
MinSpareThreads 1
MaxSpareThreads 64
ThreadsPerChild 64
ThreadLimit 64
MaxRequestWorkers 64
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 30
{auth}
<Location />
    {guard}
    ProxyPass http://127.0.0.1:{upstream}/ keepalive=On
</Location>
"""


# --- processes -----------------------------------------------------------------------------


class Peer:
    """A peer program on a free loopback port, started in the foreground with a generated
    config, ready when it answers; `stop()` ends it and its workers."""

    def __init__(self, name: str, command: list[str], workdir: Path, url: str) -> None:
        self.name = name
        self.url = url
        self.process = Process(command, dict(os.environ), workdir / f"{name}.log")
        wait_until(self._answers, timeout=30, what=f"{name} on {url}")

    def _answers(self) -> bool:
        if not self.process.alive():
            raise RuntimeError(f"{self.name} exited:\n{self.process.output()}")
        httpx.get(self.url, timeout=1)
        return True

    @property
    def pid(self) -> int:
        return self.process.popen.pid

    def stop(self) -> None:
        self.process.stop()


def start_nginx(name: str, config: str, workdir: Path, port: int) -> Peer:
    folder = workdir / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "nginx.conf"
    path.write_text(config)
    command = [binary("nginx") or "nginx", "-p", str(folder), "-c", str(path), "-e", "stderr"]
    return Peer(name, command, workdir, f"http://127.0.0.1:{port}/")


def start_haproxy(name: str, config: str, workdir: Path, port: int) -> Peer:
    path = workdir / f"{name}.cfg"
    path.write_text(config)
    command = [binary("haproxy") or "haproxy", "-db", "-f", str(path)]
    return Peer(name, command, workdir, f"http://127.0.0.1:{port}/")


def start_envoy(name: str, config: str, workdir: Path, port: int) -> Peer:
    path = workdir / f"{name}.yaml"
    path.write_text(config)
    command = [ENVOY, "-c", str(path), "--concurrency", "1", "--disable-hot-restart",
               "-l", "error", "--base-id", str(free_port())]  # fmt: skip
    return Peer(name, command, workdir, f"http://127.0.0.1:{port}/")


def start_apache(name: str, config: str, workdir: Path, port: int) -> Peer:
    folder = workdir / name
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        os.chmod(folder, 0o755)  # workers run as nobody
    path = folder / "httpd.conf"
    path.write_text(config)
    command = [binary("apache2") or "apache2", "-f", str(path), "-DFOREGROUND"]
    return Peer(name, command, workdir, f"http://127.0.0.1:{port}/")


def validate(kind: str, config: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Each peer's own config check: `nginx -t`, `haproxy -c`, `apache2 -t`, Envoy's
    `--mode validate`."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{kind}.{'yaml' if kind == 'envoy' else 'conf'}"
    path.write_text(config)
    commands = {
        "nginx": [binary("nginx") or "nginx", "-t", "-p", str(workdir), "-c", str(path),
                  "-e", "stderr"],
        "haproxy": [binary("haproxy") or "haproxy", "-c", "-f", str(path)],
        "apache": [binary("apache2") or "apache2", "-t", "-f", str(path)],
        "envoy": [ENVOY, "--mode", "validate", "-c", str(path), "-l", "error"],
    }  # fmt: skip
    return subprocess.run(commands[kind], capture_output=True, text=True, timeout=60)


# --- measuring -----------------------------------------------------------------------------


def tree(pid: int) -> list[int]:
    """`pid` and all its descendants (nginx/Apache workers, gw's Envoy)."""
    out = [pid]
    for child in _children(pid):
        out += tree(child)
    return out


def _children(pid: int) -> list[int]:
    pids: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return pids
    for task in tasks:
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def wrk(
    url: str,
    headers: dict[str, str],
    seconds: float,
    connections: int = 32,
    script: Path | None = None,
) -> dict[str, Any]:
    """One `wrk -t1` run: req/s, p50/p99 ms, requests, non-2xx answers, socket errors.
    `script`: a wrk Lua script (e.g. `rotating_header`)."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    return parse_wrk(out)


def rotating_header(path: Path, header: str, values: list[str], request_path: str) -> Path:
    """A wrk script sending each request with the next of `values` in `header` (round
    robin): every session or user is used as often as the others."""
    quoted = ",\n".join(json.dumps(v) for v in values)
    path.write_text(
        f"local values = {{\n{quoted}\n}}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i % #values + 1\n"
        f"  wrk.headers[{json.dumps(header)}] = values[i]\n"
        f'  return wrk.format("GET", {json.dumps(request_path)})\n'
        "end\n"
    )
    return path


def parse_wrk(out: str) -> dict[str, Any]:
    requests = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if requests is None or rps is None:
        raise RuntimeError(f"unexpected wrk output:\n{out}")
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    latency = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+(?:us|ms|s))$", out, re.MULTILINE))
    return {
        "rps": float(rps.group(1)),
        "requests": int(requests.group(1)),
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        "socket_errors": sum(int(g) for g in sockets.groups()) if sockets else 0,
        "p50_ms": _ms(latency.get("50", "nan ms")),
        "p99_ms": _ms(latency.get("99", "nan ms")),
    }


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    return float(match.group(1)) * _UNITS[match.group(2)] if match else float("nan")


def machine() -> dict[str, Any]:
    """The machine and the peers' versions, for the report."""
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.MULTILINE)
    mem = re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text())
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model.group(1).strip() if model else platform.processor(),
        "virtual_machine": bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.MULTILINE)),
        "memory_gb": round(int(mem.group(1)) / 1024 / 1024, 1) if mem else None,
        "kernel": platform.release(),
        "os": _os_name(),
        "python": platform.python_version(),
        # Which build: a distribution's or an official image's interpreter (compiled with
        # profile-guided and link-time optimisation) translates in about 0.83 of the time of
        # a plain source build (bench/results/translate-interpreter-side-by-side.md).
        "python_executable": os.path.realpath(sys.executable),
        "versions": versions(),
    }


def _os_name() -> str:
    release = Path("/etc/os-release")
    if release.exists():
        found = re.search(r'^PRETTY_NAME="?([^"\n]+)', release.read_text(), re.MULTILINE)
        if found:
            return found.group(1)
    return platform.platform()


def versions() -> dict[str, str]:
    def run(*command: str) -> str:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        return done.stdout + done.stderr

    def grab(pattern: str, text: str) -> str:
        found = re.search(pattern, text)
        return found.group(1) if found else "not installed"

    return {
        "envoy": grab(r"/(\d+\.\d+\.\d+)/", run(ENVOY, "--version")),
        "nginx": grab(r"nginx/(\S+)", run(binary("nginx") or "nginx", "-v")),
        "haproxy": grab(r"HAProxy version (\S+)", run(binary("haproxy") or "haproxy", "-v")),
        "apache": grab(r"Apache/(\S+)", run(binary("apache2") or "apache2", "-v")),
        "mod_auth_openidc": grab(
            r"^(\S+)", run("dpkg-query", "-W", "-f", "${Version}", "libapache2-mod-auth-openidc")
        ),
        "redis": grab(r"v=(\S+)", run("redis-server", "--version")),
        "wrk": grab(r"wrk (\S+)", run("wrk", "-v")),
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_record(benchmark: str, started: str, load_start: list[float]) -> dict[str, Any]:
    """The head of every part's result: which part ran, when, how loaded the machine was
    when it started and ended (other jobs move the numbers), and on what machine."""
    return {
        "benchmark": benchmark,
        "started": started,
        "load_average": {"start": load_start, "end": load_average()},
        "machine": machine(),
    }


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
