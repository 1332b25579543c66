"""`gw`: the server side. `gw up DIR` runs everything on one machine; the other commands run
one component each, as the orchestrator deployments do."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Protocol

import typer

# gw starts Envoy with fork + exec (to tie Envoy's life to its supervisor); gRPC's fork
# handlers are for children that go on using gRPC, which Envoy does not, and they log a
# line on every start. Read when gRPC is first imported, so set before any gw import.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from gw import __version__  # noqa: E402
from gw.logs import configure_logging  # noqa: E402

app = typer.Typer(
    help="gw: a declarative API gateway (server side).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


#: Testing only: make the admin server report another version, to see `gwctl` warn about
#: the mismatch against a real server.
ReportVersion = Annotated[str, typer.Option(hidden=True, help="Version the admin API reports.")]


@app.command()
def up(
    folder: Annotated[
        Path, typer.Argument(help="Folder of manifests to serve.", exists=True, file_okay=False)
    ],
    bind: Annotated[str, typer.Option(help="Address every component listens on.")] = "127.0.0.1",
    http_port: Annotated[int, typer.Option(help="Proxy HTTP listener.")] = 8080,
    https_port: Annotated[int, typer.Option(help="Proxy HTTPS listener.")] = 8443,
    xds_port: Annotated[int, typer.Option(help="Control plane xDS (ADS).")] = 9977,
    proxy_admin_port: Annotated[int, typer.Option(help="Envoy admin interface.")] = 19000,
    debug_port: Annotated[int, typer.Option(help="Control-plane debug/admin server.")] = 9091,
    dev_port: Annotated[
        int, typer.Option(help="Developer API (dev-admin), open while Settings devMode is true.")
    ] = 10010,
    echo_port: Annotated[
        int | None, typer.Option(help="Also run the demo echo upstream on this port.")
    ] = None,
    extauth_port: Annotated[
        int, typer.Option(help="External auth (ext_authz gRPC) server; 0 turns it off.")
    ] = 8083,
    ratelimit_port: Annotated[
        int, typer.Option(help="Rate-limit (Envoy RLS gRPC) server; 0 turns it off.")
    ] = 18081,
    ratelimit_redis: Annotated[
        str, typer.Option(help="Redis (host:port) where the rate-limit server counts.")
    ] = "127.0.0.1:6379",
    log_level: str = "info",
    envoy_log_level: str = "info",
    concurrency: Annotated[int | None, typer.Option(help="Envoy worker threads.")] = None,
    discovery: Annotated[
        bool, typer.Option(help="Discover upstreams from the folder's Services.")
    ] = True,
    report_version: ReportVersion = __version__,
) -> None:
    """Run the control plane and a gateway proxy on this machine, serving FOLDER."""
    from gw.up import UpOptions, gw_home
    from gw.up import up as run_up

    home = gw_home()
    configure_logging(log_level, home / "logs" / "gw.log")
    options = UpOptions(
        folder=folder,
        bind=bind,
        http_port=http_port,
        https_port=https_port,
        xds_port=xds_port,
        proxy_admin_port=proxy_admin_port,
        debug_port=debug_port,
        dev_port=dev_port,
        echo_port=echo_port,
        extauth_port=extauth_port or None,
        ratelimit_port=ratelimit_port or None,
        ratelimit_redis=ratelimit_redis,
        log_level=log_level,
        envoy_log_level=envoy_log_level,
        concurrency=concurrency,
        discovery=discovery,
        home=home,
        server_version=report_version,
    )
    asyncio.run(run_up(options))


# --- options of `gw controlplane` ------------------------------------------------------------

FolderOpt = Annotated[
    Path | None, typer.Option("--dir", help="Folder of manifests.", exists=True, file_okay=False)
]
OrchFlag = Annotated[
    bool, typer.Option("--orch", help="Read resources from the orchestrator (Kubernetes).")
]
GatewayNamespace = Annotated[
    str, typer.Option(envvar="POD_NAMESPACE", help="The gateway (controller) namespace.")
]
InProcessDiscovery = Annotated[
    bool, typer.Option(help="Discover upstreams in process (off when `gw discovery` runs).")
]

Kubeconfig = Annotated[
    Path | None,
    typer.Option(help="With --orch: kubeconfig file (default: in-cluster, else $KUBECONFIG)."),
]
WatchNamespaces = Annotated[
    list[str] | None,
    typer.Option(help="With --orch: only these namespaces (default: Settings, else all)."),
]
LeaderElect = Annotated[
    bool, typer.Option(help="With --orch: only the Lease holder writes statuses.")
]
LeaseDuration = Annotated[
    float, typer.Option(help="Leader election: Lease duration (s); renewal scales with it.")
]
WebhookPort = Annotated[
    int, typer.Option(help="With --orch: validation webhook (HTTPS); 0 turns it off.")
]
AllowWarnings = Annotated[
    bool, typer.Option(help="The webhook admits resources that are only Warning.")
]
XdsSocket = Annotated[
    Path | None,
    typer.Option(help="Also serve xDS on this Unix socket (proxies in other network namespaces)."),
]


@app.command()
def controlplane(
    folder: FolderOpt = None,
    orch: OrchFlag = False,
    kubeconfig: Kubeconfig = None,
    context: Annotated[str | None, typer.Option(help="With --orch: kubeconfig context.")] = None,
    namespace: GatewayNamespace = "gw-system",
    watch_namespace: WatchNamespaces = None,
    leader_elect: LeaderElect = True,
    lease_duration: LeaseDuration = 15.0,
    webhook_port: WebhookPort = 8443,
    allow_warnings: AllowWarnings = True,
    bind: str = "0.0.0.0",
    xds_port: int = 9977,
    xds_socket: XdsSocket = None,
    http_port: Annotated[int, typer.Option(help="Port the proxies' HTTP listener binds.")] = 8080,
    https_port: Annotated[int, typer.Option(help="Port the proxies' HTTPS listener binds.")] = 8443,
    proxy_bind: Annotated[str, typer.Option(help="Address the proxies' listeners bind.")] = "::",
    debug_port: int = 9091,
    dev_port: Annotated[
        int, typer.Option(help="Developer API (dev-admin), open while Settings devMode is true.")
    ] = 10010,
    log_level: Annotated[str, typer.Option(envvar="LOG_LEVEL")] = "info",
    discovery: InProcessDiscovery = True,
    report_version: ReportVersion = __version__,
) -> None:
    """Run the control plane alone: store, discovery, translator, xDS server (and the debug
    server when START_STATS_SERVER is set), serving a folder (--dir) or the cluster (--orch)."""
    from gw.translator import Options

    if (folder is None) == (not orch):
        raise typer.BadParameter("give either --dir FOLDER or --orch")
    configure_logging(log_level)
    stats = os.environ.get("START_STATS_SERVER", "").lower() not in ("", "0", "false", "no")
    options = Options(
        namespace=namespace, bind_address=proxy_bind, http_port=http_port, https_port=https_port
    )
    serving: dict[str, Any] = dict(bind=bind, xds_port=xds_port, discovery=discovery)
    serving.update(debug_port=debug_port if stats else None, dev_port=dev_port)
    serving.update(xds_socket=xds_socket, server_version=report_version)
    if folder is not None:
        asyncio.run(_serve_folder(folder, options, serving))
        return
    from gw.orch.leader import Timing
    from gw.orch.runner import OrchOptions, run

    orch_options = OrchOptions(
        kubeconfig=kubeconfig,
        context=context,
        namespace=namespace,
        watch_namespaces=tuple(watch_namespace or ()),
        leader_election=leader_elect,
        timing=Timing.scaled(lease_duration),
        webhook_port=webhook_port or None,
        allow_warnings=allow_warnings,
    )
    asyncio.run(run(orch_options, options, **serving))


async def _serve_folder(folder: Path, options: Any, serving: dict[str, Any]) -> None:
    from gw.up import start_controlplane

    servers = await start_controlplane(folder, options, **serving)
    await asyncio.gather(*servers.tasks)


@app.command("discovery")
def discovery_command(
    folder: Annotated[
        Path | None,
        typer.Option("--dir", help="Folder of manifests.", exists=True, file_okay=False),
    ] = None,
    orch: Annotated[
        bool, typer.Option("--orch", help="Discover the cluster's services (Kubernetes).")
    ] = False,
    kubeconfig: Kubeconfig = None,
    namespace: Annotated[
        str,
        typer.Option(
            envvar="POD_NAMESPACE",
            help="Where discovered upstreams go (Settings discoveryNamespace wins).",
        ),
    ] = "gw-system",
    once: Annotated[bool, typer.Option(help="Write the upstreams once and exit.")] = False,
    log_level: Annotated[str, typer.Option(envvar="LOG_LEVEL")] = "info",
) -> None:
    """Run discovery alone: keep an Upstream for every service port, as a manifest in
    FOLDER/discovered/ (--dir) or as a custom resource in the cluster (--orch). Upstreams
    edited by hand are left alone."""
    from gw.discovery.runner import run

    if (folder is None) == (not orch):
        raise typer.BadParameter("give either --dir FOLDER or --orch")
    configure_logging(log_level)

    async def main() -> None:
        if folder is not None:
            await run(folder, namespace, once=once)
            return
        from gw.orch import discovery
        from gw.orch.client import connect

        client = connect(kubeconfig)
        try:
            await discovery.run(client, namespace)
        finally:
            await client.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


@app.command()
def proxy(
    xds: Annotated[
        str, typer.Option(help="Control plane xDS address: host:port, or unix:<socket path>.")
    ] = "127.0.0.1:9977",
    admin_host: Annotated[
        str, typer.Option(help="Envoy admin address, or unix:<socket path>.")
    ] = "127.0.0.1",
    admin_port: int = 19000,
    name: Annotated[
        str | None,
        typer.Option(
            help="Proxy name, as a Gateway's proxyNames says: sets the role to "
            "gw-system~NAME (default gateway-proxy)."
        ),
    ] = None,
    role: Annotated[
        str, typer.Option(help="xDS role <namespace>~<proxy name>; --name overrides it.")
    ] = "gw-system~gateway-proxy",
    node_id: Annotated[str | None, typer.Option(help="Default: <proxy name>-<host>-<pid>.")] = None,
    log_level: str = "info",
    concurrency: int | None = None,
) -> None:
    """Run a gateway proxy (Envoy) fed by the control plane at XDS."""
    from gw.proxy.bootstrap import BootstrapOptions
    from gw.proxy.supervisor import EnvoySupervisor, ProxyOptions

    configure_logging("info")
    if name is not None:
        role = f"{role.partition('~')[0]}~{name}"
    proxy_name = role.partition("~")[2] or "gateway-proxy"
    host, _, port = xds.rpartition(":")
    if xds.startswith("unix:"):
        host, port = xds, "0"
    options = ProxyOptions(
        bootstrap=BootstrapOptions(
            node_id=node_id or f"{proxy_name}-{socket.gethostname()}-{os.getpid()}",
            role=role,
            xds_host=host.strip("[]"),
            xds_port=int(port),
            admin_host=admin_host,
            admin_port=admin_port,
        ),
        log_level=log_level,
        concurrency=concurrency,
    )
    supervisor = EnvoySupervisor(options)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        runner = asyncio.create_task(supervisor.run())
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(supervisor.stop()))
        await runner

    asyncio.run(main())


@app.command()
def extauth(
    xds: Annotated[
        str, typer.Option(help="Control plane xDS address, host:port.")
    ] = "127.0.0.1:9977",
    bind: Annotated[str, typer.Option(help="Address the ext_authz server listens on.")] = (
        "0.0.0.0"
    ),
    port: Annotated[int, typer.Option(help="ext_authz gRPC port.")] = 8083,
    role: Annotated[str, typer.Option(help="xDS role to ask configuration for.")] = (
        "gw-system~extauth"
    ),
    log_level: Annotated[str, typer.Option(envvar="LOG_LEVEL")] = "info",
) -> None:
    """Run the external auth server (OIDC logins for Envoy's ext_authz), configured by the
    control plane at XDS."""
    from gw.extauth.server import ExtauthOptions, start_extauth

    configure_logging(log_level)

    run_until_stopped(
        lambda: start_extauth(ExtauthOptions(bind=bind, port=port, xds_address=xds, role=role))
    )


@app.command()
def ratelimit(
    xds: Annotated[
        str, typer.Option(help="Control plane xDS address, host:port.")
    ] = "127.0.0.1:9977",
    bind: Annotated[str, typer.Option(help="Address the rate-limit server listens on.")] = (
        "0.0.0.0"
    ),
    port: Annotated[int, typer.Option(help="Rate-limit gRPC port.")] = 18081,
    redis: Annotated[
        str, typer.Option(envvar="REDIS_URL", help="Redis (host:port) holding the counters.")
    ] = "127.0.0.1:6379",
    role: Annotated[str, typer.Option(help="xDS role to ask configuration for.")] = (
        "gw-system~ratelimit"
    ),
    log_level: Annotated[str, typer.Option(envvar="LOG_LEVEL")] = "info",
) -> None:
    """Run the rate-limit server (Envoy's global rate-limit service, counters in Redis),
    configured by the control plane at XDS."""
    from gw.ratelimit.server import RatelimitOptions, start_ratelimit

    configure_logging(log_level)

    run_until_stopped(
        lambda: start_ratelimit(
            RatelimitOptions(bind=bind, port=port, xds_address=xds, role=role, redis=redis)
        )
    )


class _Stoppable(Protocol):
    async def stop(self) -> None: ...


def run_until_stopped(start: Callable[[], Awaitable[_Stoppable]]) -> None:
    """Run a gRPC component (extauth, rate limit) until SIGINT or SIGTERM, on uvloop, which
    makes each gRPC call about 20% cheaper (bench/results/extauth.md)."""

    async def main() -> None:
        server = await start()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await server.stop()

    try:
        import uvloop
    except ImportError:  # pragma: no cover (a platform without uvloop)
        asyncio.run(main())
    else:
        uvloop.run(main())


@app.command()
def echo(
    host: str = "127.0.0.1",
    port: int = 9000,
    name: Annotated[
        str, typer.Option(help="Returned in x-echo-name, to tell instances apart.")
    ] = "echo",
    tls_cert: Annotated[
        Path | None, typer.Option(help="Serve HTTPS with this certificate chain (PEM).")
    ] = None,
    tls_key: Annotated[Path | None, typer.Option(help="The private key of --tls-cert.")] = None,
    tls_client_ca: Annotated[
        Path | None, typer.Option(help="Require client certificates signed by this CA.")
    ] = None,
) -> None:
    """Run the demo upstream: it answers with the request it received, as JSON."""
    import ssl

    import uvicorn

    from gw.echo import build_app

    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("--tls-cert and --tls-key go together")
    uvicorn.run(
        build_app(name),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        # Show the request as it arrived: the scheme of this connection, not x-forwarded-*.
        proxy_headers=False,
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        ssl_ca_certs=str(tls_client_ca) if tls_client_ca else None,
        ssl_cert_reqs=ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
    )


@app.command()
def schema(
    kind: Annotated[str | None, typer.Argument(help="One kind; default: all.")] = None,
    out: Annotated[Path | None, typer.Option(help="Write <Kind>.json files here.")] = None,
) -> None:
    """Print the JSON schema of the resource kinds (generated from the models)."""
    import json

    from gw.api.schema import all_schemas

    schemas = all_schemas()
    if kind is not None:
        if kind not in schemas:
            raise typer.BadParameter(f"unknown kind {kind!r}; kinds: {', '.join(schemas)}")
        schemas = {kind: schemas[kind]}
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, body in schemas.items():
            (out / f"{name}.json").write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
        return
    typer.echo(json.dumps(schemas if kind is None else schemas[kind], indent=2, sort_keys=True))


@app.command()
def crds(
    out: Annotated[
        list[Path] | None,
        typer.Option(help="Write <plural>.<group>.yaml files into this folder (repeatable)."),
    ] = None,
) -> None:
    """Print the CustomResourceDefinitions of gw's kinds (generated from the models), ready
    for `kubectl apply -f -`."""
    from gw.api.crd import all_crds, render

    definitions = all_crds()
    if out:
        for folder in out:
            folder.mkdir(parents=True, exist_ok=True)
            for name, definition in definitions.items():
                (folder / f"{name}.yaml").write_text(render(definition))
        return
    typer.echo("---\n".join(render(d) for d in definitions.values()), nl=False)


@app.command()
def version() -> None:
    """Print the gw version."""
    typer.echo(__version__)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
