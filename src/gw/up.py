"""`gw up DIR`: every component on one machine, under one supervisor.

The control plane (store, translator, xDS, admin) runs in this process; Envoy, the extauth
server and the rate-limit server run as supervised children (`gw.children`), so that the
servers on the request path keep answering while the control plane works through a large
or hostile folder. "Up" is printed once the folder was read and translated, and the proxy
listens on its ports. The proxy URL and each resource's status are printed as they change;
Ctrl-C stops everything. The state file `up.json` in the instance's directory (`home`,
`$GW_HOME/instances/<name>/`: `gw.instance`) tells `gwctl` where everything listens.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from gw import __version__, defaults, lifecycle
from gw.admin.server import control_plane_component
from gw.api import ResourceKey
from gw.api.status import State, Status
from gw.asgi import AsgiServer, quiet_config
from gw.children import ComponentProcess
from gw.console.options import ConsoleOptions
from gw.controlplane import ControlPlane
from gw.portcheck import ListenersBound
from gw.proxy.bootstrap import BootstrapOptions
from gw.proxy.supervisor import EnvoySupervisor, ProxyOptions
from gw.servers import Serving, controlplane_servers, host_port
from gw.snapshot import Snapshot
from gw.translator.envoy.names import RATE_LIMIT_CONFIG
from gw.translator.options import GCP_METADATA, InstalledServer, Options, new_session_pass_key
from gw.xds.tls import is_loopback


def gw_home() -> Path:
    return Path(os.environ.get("GW_HOME") or Path.home() / ".gw")


@dataclass(frozen=True, slots=True, kw_only=True)
class UpOptions:
    folder: Path
    bind: str = defaults.LOOPBACK
    http_port: int = defaults.HTTP_PORT
    https_port: int = defaults.HTTPS_PORT
    xds_port: int = defaults.XDS_PORT
    proxy_admin_port: int = defaults.PROXY_ADMIN_PORT
    debug_port: int = defaults.DEBUG_PORT
    dev_port: int = defaults.DEV_PORT
    echo_port: int | None = None
    extauth_port: int | None = defaults.EXTAUTH_PORT
    #: The extauth server's plain-HTTP checks (None: every check over gRPC).
    extauth_http_port: int | None = defaults.EXTAUTH_HTTP_PORT
    ratelimit_port: int | None = defaults.RATELIMIT_PORT
    ratelimit_redis: str = defaults.REDIS
    log_level: str = defaults.LOG_LEVEL
    envoy_log_level: str = defaults.LOG_LEVEL
    concurrency: int | None = None
    max_downstream_connections: int = defaults.GLOBAL_DOWNSTREAM_MAX_CONNECTIONS
    discovery: bool = True
    #: Where proxies get identity tokens for `gcp` Upstreams (Google's metadata server).
    gcp_metadata_server: InstalledServer = GCP_METADATA
    #: This run's state directory (`gw.instance`): state file, proxy bootstrap, logs.
    home: Path = field(default_factory=gw_home)
    #: Envoy statistics per route (the console charts them; they cost proxy memory).
    route_stats: bool = False
    #: The console may send an explained request through the proxy.
    console_send: bool = False


async def up(options: UpOptions, out: TextIO = sys.stdout) -> None:
    """Serve until SIGINT/SIGTERM; raises `lifecycle.Failure` when a component cannot start
    or stops on its own (everything started is stopped first)."""
    translate_options = Options(
        bind_address=options.bind,
        http_port=options.http_port,
        https_port=options.https_port,
        # Declared to the translator as the Upstreams `extauth` and `rate-limit`.
        extauth_server=_installed(options.bind, options.extauth_port),
        extauth_http_server=_installed(
            options.bind, options.extauth_http_port if options.extauth_port else None
        ),
        ratelimit_server=_installed(options.bind, options.ratelimit_port),
        route_stats=options.route_stats,
        gcp_metadata_server=options.gcp_metadata_server,
        session_pass_key=new_session_pass_key(),
    )
    envoy = _envoy(options)
    children = _components(options, translate_options.namespace)
    plane = controlplane_servers(
        options.folder,
        translate_options,
        Serving(
            bind=options.bind,
            xds_port=options.xds_port,
            debug_port=options.debug_port,
            dev_port=options.dev_port,
            discovery=options.discovery,
            xds_bind=xds_host(options.bind),
            console=ConsoleOptions(
                proxy_admin_url=f"http://{_host(options.bind)}:{options.proxy_admin_port}",
                send_host=_host(options.bind).strip("[]") if options.console_send else None,
            ),
        ),
        on_status=StatusPrinter(out),
        components=lambda: [
            control_plane_component(),
            proxy_component(envoy, options),
            *(
                child_component(child, _counts_in(child, options, plane.controlplane))
                for child in children
            ),
        ],
        wait_first_translation=True,
    )
    servers: list[lifecycle.Server] = [*plane.servers, *children, *_echo(options)]
    servers.append(lifecycle.TaskServer("envoy", envoy.run, stop=envoy.stop))
    # Up only once the proxy listens: a taken port fails `gw up` (gw.portcheck).
    proxy_log = options.home / "logs" / "gateway-proxy.log"
    servers.append(
        ListenersBound(
            plane.ads, defaults.PROXY_ROLE, log=proxy_log, restarts=lambda: envoy.restarts
        )
    )
    state: list[Path] = []

    def started() -> None:
        state.append(_write_state(options))
        _print_banner(options, out, plane.controlplane)

    try:
        await lifecycle.serve(
            servers,
            on_started=started,
            on_stopping=lambda: print("gw is stopping", file=out, flush=True),
        )
    finally:
        for path in state:
            path.unlink(missing_ok=True)


def _components(options: UpOptions, namespace: str) -> list[ComponentProcess]:
    """The extauth and rate-limit servers, each a child process (`gw extauth`,
    `gw ratelimit`) configured over xDS like everywhere else."""
    xds_address = host_port(xds_host(options.bind), options.xds_port)
    children = []
    http_checks = ("--http-port", str(options.extauth_http_port or 0))
    for name, port, extra in (
        ("extauth", options.extauth_port, http_checks),
        ("ratelimit", options.ratelimit_port, ("--redis", options.ratelimit_redis)),
    ):
        if port is None:
            continue
        args = [name, "--bind", options.bind, "--port", str(port), "--xds", xds_address]
        args += ["--role", defaults.role(name, namespace), "--log-level", options.log_level]
        log_path = options.home / "logs" / f"{name}.log"
        host = _host(options.bind).strip("[]")
        children.append(ComponentProcess(name, [*args, *extra], host, port, log_path))
    return children


def _echo(options: UpOptions) -> list[lifecycle.Server]:
    """The demo echo upstream, when asked for."""
    if options.echo_port is None:
        return []
    from gw.echo import build_app as build_echo

    config = quiet_config(build_echo("echo"), options.bind, options.echo_port)
    return [AsgiServer("echo", config)]


def _installed(bind: str, port: int | None) -> InstalledServer | None:
    """Where Envoy reaches a server this process runs (on every address: loopback)."""
    if port is None:
        return None
    return InstalledServer(defaults.LOOPBACK if bind in ("0.0.0.0", "::") else bind, port)


def _print_banner(options: UpOptions, out: TextIO, controlplane: ControlPlane) -> None:
    url = f"http://{_host(options.bind)}:{options.http_port}"
    print(f"gw {__version__} is up: proxy at {url}", file=out, flush=True)
    failure = controlplane.translation.failure()
    if failure is not None:
        print(f"  but {failure} (gwctl check)", file=out)
    print(f"  serving {options.folder} (edit the files; changes apply at once)", file=out)
    print(f"  control plane admin at http://{_host(options.bind)}:{options.debug_port}/", file=out)
    print(f"  console at http://{_host(options.bind)}:{options.debug_port}/console/", file=out)
    if options.extauth_port is not None:
        print(f"  extauth server at {_host(options.bind)}:{options.extauth_port}", file=out)
    if options.ratelimit_port is not None:
        print(
            f"  rate-limit server at {_host(options.bind)}:{options.ratelimit_port} "
            f"(counting in redis at {options.ratelimit_redis})",
            file=out,
        )
    out.flush()


#: Status lines printed for one translation at most; beyond, the others are counted.
STATUS_LINES = 50


class StatusPrinter:
    """Prints one line per status change: `VirtualService default.web: Accepted`.

    A translation that changes more than `STATUS_LINES` statuses (the start over a large
    folder, a branch checked out) prints those that are not `Accepted` (up to that many)
    and a line that counts them all: 100,000 lines of `Accepted` would bury what is wrong,
    and writing them to a terminal holds the event loop for as long as it takes to show
    them."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._input_errors: set[str] = set()

    def __call__(self, changed: Mapping[ResourceKey, Status | None], snapshot: Snapshot) -> None:
        lines = sorted(changed.items())
        summary = None
        if len(lines) > STATUS_LINES:
            lines, summary = _summarized(lines)
        for key, status in lines:
            self.out.write(f"{key}: {describe_status(status)}\n")
        if summary is not None:
            self.out.write(summary)
        errors = {str(e) for e in snapshot.errors if e.key is None}
        for error in sorted(errors - self._input_errors):
            self.out.write(f"cannot read {error}\n")
        self._input_errors = errors
        self.out.flush()


def _summarized(
    lines: list[tuple[ResourceKey, Status | None]],
) -> tuple[list[tuple[ResourceKey, Status | None]], str]:
    """The lines to print (those that are not `Accepted`, up to `STATUS_LINES`) and the
    line that counts every state."""
    notable = [(k, s) for k, s in lines if s is None or s.state is not State.ACCEPTED]
    counts = Counter("deleted" if s is None else s.state.value for _, s in lines)
    listed = ", ".join(f"{n:,} {state}" for state, n in sorted(counts.items()))
    shown = notable[:STATUS_LINES]
    summary = (
        f"{len(lines):,} statuses changed ({listed}); {len(lines) - len(shown):,} not listed "
        "here: `gwctl get <kind>` lists them, `gwctl check` shows what is wrong\n"
    )
    return shown, summary


def describe_status(status: Status | None) -> str:
    """One line: `Accepted`, or `Rejected: <finding>; <finding>`."""
    if status is None:
        return "deleted"
    if status.state is State.ACCEPTED:
        return status.state.value
    findings = [
        line.strip().removeprefix("* ").strip()
        for line in status.reason.splitlines()
        if line.strip() and not line.strip().endswith(("occurred:", "warning:"))
    ]
    text = f"{status.state.value}: " + "; ".join(findings)
    if status.messages:
        text += f" ({'; '.join(status.messages)})"
    return text


def _envoy(options: UpOptions) -> EnvoySupervisor:
    return EnvoySupervisor(
        ProxyOptions(
            bootstrap=BootstrapOptions(
                node_id=f"{defaults.PROXY_NAME}-{socket.gethostname()}-{os.getpid()}",
                xds_host=xds_host(options.bind),
                xds_port=options.xds_port,
                admin_host=options.bind,
                admin_port=options.proxy_admin_port,
                max_downstream_connections=options.max_downstream_connections,
            ),
            log_level=options.envoy_log_level,
            concurrency=options.concurrency,
            log_path=options.home / "logs" / "gateway-proxy.log",
            workdir=options.home / "proxy",
        )
    )


def child_component(child: ComponentProcess, redis: str | None = None) -> dict[str, Any]:
    """The extauth or rate-limit server as `/components` lists it; `redis`: where it
    counts, which `gwctl check` pings (a rate-limit server without its Redis runs, but
    every check it makes fails)."""
    return {
        "name": child.name,
        "namespace": defaults.NAMESPACE,
        "role": child.name,
        "pid": child.process.pid if child.process else None,
        "running": child.running,
        "restarts": child.restarts,
        **({"redis": redis} if redis else {}),
    }


def _counts_in(
    child: ComponentProcess, options: UpOptions, controlplane: ControlPlane
) -> str | None:
    """The rate-limit server's Redis while it has limits to count (without any, a Redis
    that is down or not installed harms nothing: `gwctl check` does not ask for it)."""
    if child.name != "ratelimit":
        return None
    result = controlplane.result
    configs = result.ratelimit.of(RATE_LIMIT_CONFIG) if result is not None else {}
    return options.ratelimit_redis if configs else None


def proxy_component(envoy: EnvoySupervisor, options: UpOptions) -> dict[str, Any]:
    """The gateway-proxy as `/components` lists it; `healthUrl` answers 200 when ready."""
    process = envoy.process
    return {
        "name": defaults.PROXY_NAME,
        "namespace": defaults.NAMESPACE,
        "role": "proxy",
        "pid": process.pid if process else None,
        "running": process is not None and process.returncode is None,
        "restarts": envoy.restarts,
        "healthUrl": f"http://{_host(options.bind)}:{options.proxy_admin_port}/ready",
    }


def _write_state(options: UpOptions) -> Path:
    host = _host(options.bind)
    state = {
        "version": __version__,
        "pid": os.getpid(),
        "folder": str(options.folder.resolve()),
        "proxyUrl": f"http://{host}:{options.http_port}",
        "proxyHttpsUrl": f"https://{host}:{options.https_port}",
        "proxyAdminUrl": f"http://{host}:{options.proxy_admin_port}",
        "adminUrl": f"http://{host}:{options.debug_port}",
        "xdsAddress": host_port(xds_host(options.bind), options.xds_port),
        "devAdminUrl": f"http://{host}:{options.dev_port}",
        **(
            {"extauthAddress": f"{host}:{options.extauth_port}"}
            if options.extauth_port is not None
            else {}
        ),
        **(
            {"ratelimitAddress": f"{host}:{options.ratelimit_port}"}
            if options.ratelimit_port is not None
            else {}
        ),
        "logs": {
            "gateway-proxy": str(options.home / "logs" / "gateway-proxy.log"),
            "gw": str(options.home / "logs" / "gw.log"),
            **{
                name: str(options.home / "logs" / f"{name}.log")
                for name, port in (
                    ("extauth", options.extauth_port),
                    ("ratelimit", options.ratelimit_port),
                )
                if port is not None
            },
        },
    }
    options.home.mkdir(parents=True, exist_ok=True)
    path = options.home / "up.json"
    path.write_text(json.dumps(state, indent=2) + "\n")
    return path


def xds_host(bind: str) -> str:
    """xDS stays on loopback, in plaintext, whatever `--bind` says: every party is on this
    machine, and plaintext xDS elsewhere would hand the TLS keys to whoever connects."""
    return bind if is_loopback(host_port(bind, 0)) else defaults.LOOPBACK


def _host(bind: str) -> str:
    if bind in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{bind}]" if ":" in bind else bind
