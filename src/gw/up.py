"""`gw up DIR`: every component on one machine, under one supervisor.

The control plane (store, translator, xDS, admin) runs in this process; Envoy runs as a
supervised child. The proxy URL and each resource's status are printed as they change;
Ctrl-C stops everything. A state file (`$GW_HOME/up.json`, default `~/.gw/up.json`) tells
`gwctl` where everything listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from gw import __version__
from gw.admin.devmode import DevMode
from gw.admin.server import Components, build_app, control_plane_component
from gw.api import ResourceKey
from gw.api.status import State, Status
from gw.asgi import embedded_server
from gw.controlplane import ControlPlane, Store
from gw.discovery import ServiceDiscovery
from gw.proxy.bootstrap import BootstrapOptions
from gw.proxy.supervisor import EnvoySupervisor, ProxyOptions
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.xds.cache import SnapshotCache
from gw.xds.server import AdsServer, start_server

log = logging.getLogger(__name__)


def gw_home() -> Path:
    return Path(os.environ.get("GW_HOME") or Path.home() / ".gw")


@dataclass(frozen=True, slots=True, kw_only=True)
class UpOptions:
    folder: Path
    bind: str = "127.0.0.1"
    http_port: int = 8080
    https_port: int = 8443
    xds_port: int = 9977
    proxy_admin_port: int = 19000
    debug_port: int = 9091
    dev_port: int = 10010
    echo_port: int | None = None
    extauth_port: int | None = 8083
    ratelimit_port: int | None = 18081
    ratelimit_redis: str = "127.0.0.1:6379"
    log_level: str = "info"
    envoy_log_level: str = "info"
    concurrency: int | None = None
    discovery: bool = True
    home: Path = field(default_factory=gw_home)
    #: The version the admin server reports (testing `gwctl version` mismatches only).
    server_version: str = __version__


@dataclass(slots=True)
class ControlPlaneServers:
    controlplane: ControlPlane
    ads: AdsServer
    tasks: list[asyncio.Task[Any]]
    stops: list[Callable[[], Any]]


async def start_controlplane(
    folder: Path | Store,
    options: Options,
    *,
    bind: str,
    xds_port: int,
    debug_port: int | None,
    dev_port: int | None = None,
    on_status: Callable[[Mapping[ResourceKey, Status | None], Snapshot], None] | None = None,
    discovery: bool = True,
    server_version: str = __version__,
    components: Components | None = None,
    xds_socket: Path | None = None,
) -> ControlPlaneServers:
    """Store + discovery + translator + xDS server (+ the debug server when `debug_port` is
    set, and the developer API on `dev_port` while Settings say `devMode: true`).

    `folder` is served by a `DirectoryStore`; any other store (the orchestrator's) is used as
    given. `discovery=False` leaves discovery to a separate `gw discovery` process.
    `xds_socket` also serves xDS on that Unix socket."""
    store = DirectoryStore(folder) if isinstance(folder, Path) else folder
    cache = SnapshotCache()
    ads = AdsServer(cache)
    sockets = [f"unix:{xds_socket}"] if xds_socket else []
    grpc_server = await start_server(ads, _join(bind, xds_port), *sockets)
    controlplane = ControlPlane(
        store,
        cache,
        options,
        discovery=ServiceDiscovery(options.namespace) if discovery else None,
        on_status=on_status,
    )
    tasks: list[asyncio.Task[Any]] = [asyncio.create_task(controlplane.run(), name="controlplane")]
    stops: list[Callable[[], Any]] = [lambda: grpc_server.stop(grace=0.5)]
    if debug_port is not None:
        app = build_app(controlplane, ads, server_version=server_version, components=components)
        admin = embedded_server(app, bind, debug_port)
        tasks.append(asyncio.create_task(admin.serve(), name="admin"))
        stops.append(lambda: setattr(admin, "should_exit", True))
    if dev_port is not None:
        stops.append(DevMode(controlplane, bind, dev_port).stop)
    return ControlPlaneServers(controlplane, ads, tasks, stops)


async def up(options: UpOptions, out: TextIO = sys.stdout) -> None:
    translate_options = Options(
        bind_address=options.bind, http_port=options.http_port, https_port=options.https_port
    )
    printer = StatusPrinter(out)
    envoy = _envoy(options)
    servers = await start_controlplane(
        options.folder,
        translate_options,
        bind=options.bind,
        xds_port=options.xds_port,
        debug_port=options.debug_port,
        dev_port=options.dev_port,
        on_status=printer,
        discovery=options.discovery,
        server_version=options.server_version,
        components=lambda: [control_plane_component(), proxy_component(envoy, options)],
    )
    if options.extauth_port is not None:
        await _start_extauth(options, translate_options.namespace, servers)
    if options.ratelimit_port is not None:
        await _start_ratelimit(options, translate_options.namespace, servers)
    tasks = list(servers.tasks)
    tasks.append(asyncio.create_task(envoy.run(), name="envoy"))
    stops = list(servers.stops)
    if options.echo_port is not None:
        from gw.echo import build_app as build_echo

        echo = embedded_server(build_echo("echo"), options.bind, options.echo_port)
        tasks.append(asyncio.create_task(echo.serve(), name="echo"))
        stops.append(lambda: setattr(echo, "should_exit", True))

    state = _write_state(options)
    url = f"http://{_host(options.bind)}:{options.http_port}"
    print(f"gw {__version__} is up: proxy at {url}", file=out, flush=True)
    print(f"  serving {options.folder} (edit the files; changes apply at once)", file=out)
    print(f"  control plane admin at http://{_host(options.bind)}:{options.debug_port}/", file=out)
    if options.extauth_port is not None:
        print(f"  extauth server at {_host(options.bind)}:{options.extauth_port}", file=out)
    if options.ratelimit_port is not None:
        print(
            f"  rate-limit server at {_host(options.bind)}:{options.ratelimit_port} "
            f"(counting in redis at {options.ratelimit_redis})",
            file=out,
        )
    out.flush()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    failed = asyncio.create_task(_first_failure(tasks))
    await asyncio.wait(
        [asyncio.create_task(stop.wait()), failed], return_when=asyncio.FIRST_COMPLETED
    )
    print("gw is stopping", file=out, flush=True)
    await envoy.stop()
    for stop_one in stops:
        result = stop_one()
        if asyncio.iscoroutine(result):
            await result
    for task in tasks:
        task.cancel()
    with contextlib.suppress(Exception):
        await asyncio.gather(*tasks, return_exceptions=True)
    failed.cancel()
    with contextlib.suppress(FileNotFoundError):
        state.unlink()


async def _start_extauth(options: UpOptions, namespace: str, servers: ControlPlaneServers) -> None:
    """The extauth server, in this process, configured over xDS like everywhere else."""
    from gw.extauth.server import ExtauthOptions, start_extauth

    extauth = await start_extauth(
        ExtauthOptions(
            bind=options.bind,
            port=options.extauth_port or 8083,
            xds_address=_join(options.bind, options.xds_port),
            role=f"{namespace}~extauth",
        )
    )
    servers.tasks.append(extauth.task)
    servers.stops.append(extauth.stop)


async def _start_ratelimit(
    options: UpOptions, namespace: str, servers: ControlPlaneServers
) -> None:
    """The rate-limit server, in this process, configured over xDS like everywhere else."""
    from gw.ratelimit.server import RatelimitOptions, start_ratelimit

    ratelimit = await start_ratelimit(
        RatelimitOptions(
            bind=options.bind,
            port=options.ratelimit_port or 18081,
            xds_address=_join(options.bind, options.xds_port),
            role=f"{namespace}~ratelimit",
            redis=options.ratelimit_redis,
        )
    )
    servers.tasks.append(ratelimit.task)
    servers.stops.append(ratelimit.stop)


class StatusPrinter:
    """Prints one line per status change: `VirtualService default.web: Accepted`."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._input_errors: set[str] = set()

    def __call__(self, changed: Mapping[ResourceKey, Status | None], snapshot: Snapshot) -> None:
        for key, status in sorted(changed.items()):
            self.out.write(f"{key}: {describe_status(status)}\n")
        errors = {str(e) for e in snapshot.errors if e.key is None}
        for error in sorted(errors - self._input_errors):
            self.out.write(f"cannot read {error}\n")
        self._input_errors = errors
        self.out.flush()


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


async def _first_failure(tasks: list[asyncio.Task[Any]]) -> None:
    """Return when any component stops on its own (which is a failure)."""
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_name(), exc_info=task.exception())
            print(f"gw: {task.get_name()} failed: {task.exception()}", file=sys.stderr)


def _envoy(options: UpOptions) -> EnvoySupervisor:
    return EnvoySupervisor(
        ProxyOptions(
            bootstrap=BootstrapOptions(
                node_id=f"gateway-proxy-{socket.gethostname()}-{os.getpid()}",
                xds_host=options.bind,
                xds_port=options.xds_port,
                admin_host=options.bind,
                admin_port=options.proxy_admin_port,
            ),
            log_level=options.envoy_log_level,
            concurrency=options.concurrency,
            log_path=options.home / "logs" / "gateway-proxy.log",
            workdir=options.home / "proxy",
        )
    )


def proxy_component(envoy: EnvoySupervisor, options: UpOptions) -> dict[str, Any]:
    """The gateway-proxy as `/components` lists it; `healthUrl` answers 200 when ready."""
    process = envoy.process
    return {
        "name": "gateway-proxy",
        "namespace": "gw-system",
        "role": "proxy",
        "pid": process.pid if process else None,
        "running": process is not None and process.returncode is None,
        "restarts": envoy.restarts,
        "healthUrl": f"http://{_host(options.bind)}:{options.proxy_admin_port}/ready",
    }


def _write_state(options: UpOptions) -> Path:
    host = _host(options.bind)
    state = {
        "version": options.server_version,
        "pid": os.getpid(),
        "folder": str(options.folder.resolve()),
        "proxyUrl": f"http://{host}:{options.http_port}",
        "proxyHttpsUrl": f"https://{host}:{options.https_port}",
        "proxyAdminUrl": f"http://{host}:{options.proxy_admin_port}",
        "adminUrl": f"http://{host}:{options.debug_port}",
        "xdsAddress": f"{host}:{options.xds_port}",
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
        },
    }
    options.home.mkdir(parents=True, exist_ok=True)
    path = options.home / "up.json"
    path.write_text(json.dumps(state, indent=2) + "\n")
    return path


def _host(bind: str) -> str:
    if bind in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{bind}]" if ":" in bind else bind


def _join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
