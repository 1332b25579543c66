"""The control plane's servers, assembled for one process: the xDS server, the control-plane
loop over a store, the debug/admin server and the developer API.

`gw up`, `gw controlplane --dir` and `gw controlplane --orch` (`gw.orch.runner`) all build
them here and run them with `gw.lifecycle.serve()`, each adding its own servers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gw import lifecycle
from gw.admin.devmode import DevMode
from gw.admin.server import Components, build_app
from gw.api import ResourceKey
from gw.api.status import Status
from gw.asgi import AsgiServer, quiet_config
from gw.console.options import ConsoleOptions
from gw.controlplane import ControlPlane, Store
from gw.discovery import ServiceDiscovery
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.xds.cache import SnapshotCache
from gw.xds.identity import NodePolicy
from gw.xds.server import AdsServer, XdsServer


@dataclass(frozen=True, slots=True, kw_only=True)
class Serving:
    """Where the control plane serves: xDS on `bind:xds_port` (and `xds_socket`), the debug
    server on `debug_port` when set, the developer API on `dev_port` when set and Settings
    say `devMode: true`; `discovery=False` leaves discovery to a `gw discovery` process.
    xDS is mutual TLS with the certificates in the folder `xds_certs`, else plaintext, which
    only loopback may serve unless `insecure_xds` (gw.xds.tls)."""

    bind: str
    xds_port: int
    debug_port: int | None
    dev_port: int | None = None
    xds_socket: Path | None = None
    discovery: bool = True
    xds_certs: Path | None = None
    insecure_xds: bool = False
    #: Where xDS listens when not on `bind` (`gw up`: loopback, whatever `bind` says).
    xds_bind: str | None = None
    #: What the console on the debug server may reach (`gw up`: the proxy's admin).
    console: ConsoleOptions = ConsoleOptions()


@dataclass(frozen=True, slots=True)
class ControlPlaneServers:
    controlplane: ControlPlane
    ads: AdsServer
    #: In start order: xDS, the debug server and the developer API if any, the loop.
    servers: list[lifecycle.Server]


def controlplane_servers(
    store: Path | Store,
    options: Options,
    serving: Serving,
    *,
    on_status: Callable[[Mapping[ResourceKey, Status | None], Snapshot], None] | None = None,
    components: Components | None = None,
    wait_first_translation: bool = False,
) -> ControlPlaneServers:
    """A folder (`Path`) is served by a `DirectoryStore`; any other store (the
    orchestrator's) is used as given. Nothing listens before the servers start.

    `wait_first_translation`: the loop's `start()` returns once the folder was read and
    translated (or failed to), so that "up" means the proxies have their configuration."""
    cache = SnapshotCache()
    ads = AdsServer(cache, NodePolicy(options.namespace))
    controlplane = ControlPlane(
        DirectoryStore(store, options.namespace, read_workers=True)
        if isinstance(store, Path)
        else store,
        cache,
        options,
        discovery=ServiceDiscovery(options.namespace) if serving.discovery else None,
        on_status=on_status,
    )
    sockets = [f"unix:{serving.xds_socket}"] if serving.xds_socket else []
    servers: list[lifecycle.Server] = [
        XdsServer(
            ads,
            host_port(serving.xds_bind or serving.bind, serving.xds_port),
            *sockets,
            certs=serving.xds_certs,
            insecure=serving.insecure_xds,
        )
    ]
    if serving.debug_port is not None:
        app = build_app(controlplane, ads, components=components, console=serving.console)
        servers.append(AsgiServer("admin", quiet_config(app, serving.bind, serving.debug_port)))
    if serving.dev_port is not None:
        servers.append(DevMode(controlplane, serving.bind, serving.dev_port))
    # Last, so that the developer API follows the first translation already.
    ready = controlplane.attempted.wait if wait_first_translation else None
    servers.append(lifecycle.TaskServer("controlplane", controlplane.run, ready=ready))
    return ControlPlaneServers(controlplane, ads, servers)


def host_port(host: str, port: int) -> str:
    """`host:port`, with an IPv6 host in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
