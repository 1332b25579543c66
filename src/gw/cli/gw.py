"""`gw`: the server side. `gw up DIR` runs everything on one machine; the other commands run
one component each, as the orchestrator deployments do."""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

# gw starts Envoy with fork + exec (to tie Envoy's life to its supervisor); gRPC's fork
# handlers are for children that go on using gRPC, which Envoy does not, and they log a
# line on every start. Read when gRPC is first imported, so set before any gw import.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

from gw import __version__, defaults  # noqa: E402
from gw.cli.xds_tls import InsecureXds, XdsCerts, refuse_plaintext  # noqa: E402
from gw.logs import configure_logging  # noqa: E402

if TYPE_CHECKING:
    from gw.lifecycle import Server
    from gw.servers import Serving
    from gw.translator.options import InstalledServer, Options
    from gw.xds.component import Placement

app = typer.Typer(
    help="gw: a declarative API gateway (server side).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


#: How long (seconds) a thread of a server command may hold the interpreter while another
#: waits for it (`run_command`).
SWITCH_INTERVAL = 0.001


def run_command(main: Coroutine[Any, Any, None], *, uvloop: bool = False) -> None:
    """Run a command's servers (`gw.lifecycle.serve()` inside `main`) to the end: a server
    that could not start or stopped on its own exits 1, after everything else stopped.

    `uvloop` makes each gRPC call about 20% cheaper (bench/results/extauth.md): the extauth
    and rate-limit servers run on it.

    A thread holds the interpreter for at most `SWITCH_INTERVAL` while another waits for
    it. The control plane reads and translates in threads of their own, and at Python's
    default (5 ms) the event loop's thread waited that long for it at each socket
    operation: during the translation of 100,000 VirtualServices, the admin API answered in
    13 ms (p50) instead of 3.5 ms, and stopping took seconds.

    Once the servers stopped, what the process made is frozen out of the collector
    (`gc.freeze`): the interpreter's last collections at exit would otherwise walk all of
    it, and a control plane stopped during the translation of 100,000 VirtualServices
    spent about 2.7 s exiting on them (everything is freed with the process anyway)."""
    from gw.lifecycle import Failure

    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        if uvloop:
            _run_on_uvloop(main)
        else:
            asyncio.run(main)
    except Failure as failure:
        typer.echo(f"gw: {failure}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:  # Ctrl-C before the servers took the signals over
        raise typer.Exit(130) from None
    finally:
        gc.freeze()


def _run_on_uvloop(main: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:  # pragma: no cover (a platform without uvloop)
        asyncio.run(main)
    else:
        uvloop.run(main)


MaxConnections = Annotated[
    int,
    typer.Option(
        min=1,
        help="Client connections the proxy accepts across all its listeners; more are closed "
        "as they open (the admin port is exempt).",
    ),
]


@app.command()
def up(
    folder: Annotated[
        Path, typer.Argument(help="Folder of manifests to serve.", exists=True, file_okay=False)
    ],
    bind: Annotated[
        str, typer.Option(help="Address every component listens on.")
    ] = defaults.LOOPBACK,
    http_port: Annotated[int, typer.Option(help="Proxy HTTP listener.")] = defaults.HTTP_PORT,
    https_port: Annotated[int, typer.Option(help="Proxy HTTPS listener.")] = defaults.HTTPS_PORT,
    xds_port: Annotated[int, typer.Option(help="Control plane xDS (ADS).")] = defaults.XDS_PORT,
    proxy_admin_port: Annotated[
        int, typer.Option(help="Envoy admin interface.")
    ] = defaults.PROXY_ADMIN_PORT,
    debug_port: Annotated[
        int, typer.Option(help="Control-plane debug/admin server.")
    ] = defaults.DEBUG_PORT,
    dev_port: DevPort = defaults.DEV_PORT,
    echo_port: Annotated[
        int | None, typer.Option(help="Also run the demo echo upstream on this port.")
    ] = None,
    extauth_port: Annotated[
        int, typer.Option(help="External auth (ext_authz gRPC) server; 0 turns it off.")
    ] = defaults.EXTAUTH_PORT,
    extauth_http_port: Annotated[
        int,
        typer.Option(
            help="The extauth server's plain-HTTP checks (the Upstream extauth-http); 0 "
            "turns them off (every check over gRPC)."
        ),
    ] = defaults.EXTAUTH_HTTP_PORT,
    ratelimit_port: Annotated[
        int, typer.Option(help="Rate-limit (Envoy RLS gRPC) server; 0 turns it off.")
    ] = defaults.RATELIMIT_PORT,
    ratelimit_redis: Annotated[
        str, typer.Option(help="Redis (host:port) where the rate-limit server counts.")
    ] = defaults.REDIS,
    log_level: str = defaults.LOG_LEVEL,
    envoy_log_level: str = defaults.LOG_LEVEL,
    concurrency: Annotated[int | None, typer.Option(help="Envoy worker threads.")] = None,
    global_downstream_max_connections: MaxConnections = defaults.GLOBAL_DOWNSTREAM_MAX_CONNECTIONS,
    discovery: Annotated[
        bool, typer.Option(help="Discover upstreams from the folder's Services.")
    ] = True,
    gcp_metadata_server: GcpMetadataServer = defaults.GCP_METADATA_SERVER,
    instance: Annotated[
        str | None,
        typer.Option(
            help="Name of this run's state directory under $GW_HOME/instances (default: "
            "from the folder); gwctl --instance NAME picks it."
        ),
    ] = None,
    route_stats: RouteStats = False,
    console_send: Annotated[
        bool,
        typer.Option(
            help="The console's explain page may send the request through the proxy (off: "
            "the console only reads)."
        ),
    ] = False,
) -> None:
    """Run the control plane and a gateway proxy on this machine, serving FOLDER."""
    from gw.instance import InstanceError, claim
    from gw.up import UpOptions, gw_home
    from gw.up import up as run_up

    metadata = metadata_server(gcp_metadata_server)
    try:
        claimed = claim(gw_home(), folder, instance)
    except InstanceError as exc:
        typer.echo(f"gw: {exc}", err=True)
        raise typer.Exit(1) from None
    home = claimed.instance.directory
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
        extauth_http_port=(extauth_http_port or None) if extauth_port else None,
        ratelimit_port=ratelimit_port or None,
        ratelimit_redis=ratelimit_redis,
        log_level=log_level,
        envoy_log_level=envoy_log_level,
        concurrency=concurrency,
        max_downstream_connections=global_downstream_max_connections,
        discovery=discovery,
        gcp_metadata_server=metadata,
        home=home,
        route_stats=route_stats,
        console_send=console_send,
    )
    try:
        run_command(run_up(options))
    finally:
        claimed.release()


# --- options of `gw controlplane` ------------------------------------------------------------

RouteStats = Annotated[
    bool,
    typer.Option(
        help="Envoy statistics for every route (the console charts them); costs proxy "
        "memory per route."
    ),
]

DevPort = Annotated[
    int, typer.Option(help="Developer API (dev-admin), open while Settings devMode is true.")
]
LogLevel = Annotated[str, typer.Option(envvar="LOG_LEVEL")]

FolderOpt = Annotated[
    Path | None, typer.Option("--dir", help="Folder of manifests.", exists=True, file_okay=False)
]
OrchFlag = Annotated[
    bool, typer.Option("--orch", help="Read resources from the orchestrator (Kubernetes).")
]
GatewayNamespace = Annotated[
    str, typer.Option(envvar="POD_NAMESPACE", help="The gateway (controller) namespace.")
]
GcpMetadataServer = Annotated[
    str,
    typer.Option(
        envvar="GCE_METADATA_HOST",
        help="The GCP metadata server (host[:port]) the proxies get identity tokens from, "
        "for gcp Upstreams.",
    ),
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
    namespace: GatewayNamespace = defaults.NAMESPACE,
    watch_namespace: WatchNamespaces = None,
    leader_elect: LeaderElect = True,
    lease_duration: LeaseDuration = defaults.LEASE_DURATION,
    webhook_port: WebhookPort = defaults.WEBHOOK_PORT,
    allow_warnings: AllowWarnings = True,
    bind: str = defaults.ANY_ADDRESS,
    xds_port: int = defaults.XDS_PORT,
    xds_socket: XdsSocket = None,
    xds_certs: XdsCerts = None,
    insecure_xds: InsecureXds = False,
    http_port: Annotated[
        int, typer.Option(help="Port the proxies' HTTP listener binds.")
    ] = defaults.HTTP_PORT,
    https_port: Annotated[
        int, typer.Option(help="Port the proxies' HTTPS listener binds.")
    ] = defaults.HTTPS_PORT,
    proxy_bind: Annotated[
        str, typer.Option(help="Address the proxies' listeners bind.")
    ] = defaults.PROXY_BIND,
    debug_port: int = defaults.DEBUG_PORT,
    dev_port: DevPort = defaults.DEV_PORT,
    log_level: LogLevel = defaults.LOG_LEVEL,
    discovery: InProcessDiscovery = True,
    route_stats: RouteStats = False,
    gcp_metadata_server: GcpMetadataServer = defaults.GCP_METADATA_SERVER,
) -> None:
    """Run the control plane alone: store, discovery, translator, xDS server (and the debug
    server when START_STATS_SERVER is set), serving a folder (--dir) or the cluster (--orch)."""
    from gw.servers import Serving
    from gw.translator.options import Options, new_session_pass_key

    if (folder is None) == (not orch):
        raise typer.BadParameter("give either --dir FOLDER or --orch")
    configure_logging(log_level)
    stats = os.environ.get("START_STATS_SERVER", "").lower() not in ("", "0", "false", "no")
    options = Options(
        namespace=namespace,
        bind_address=proxy_bind,
        http_port=http_port,
        https_port=https_port,
        route_stats=route_stats,
        gcp_metadata_server=metadata_server(gcp_metadata_server),
        session_pass_key=new_session_pass_key(),
    )
    serving = Serving(
        bind=bind,
        xds_port=xds_port,
        debug_port=debug_port if stats else None,
        dev_port=dev_port,
        xds_socket=xds_socket,
        discovery=discovery,
        xds_certs=xds_certs,
        insecure_xds=insecure_xds,
    )
    if folder is not None:
        run_command(_serve_folder(folder, options, serving))
        return
    from gw.orch import runner
    from gw.orch.leader import Timing

    orch_options = runner.OrchOptions(
        kubeconfig=kubeconfig,
        context=context,
        namespace=namespace,
        watch_namespaces=tuple(watch_namespace or ()),
        leader_election=leader_elect,
        timing=Timing.scaled(lease_duration),
        webhook_port=webhook_port or None,
        allow_warnings=allow_warnings,
    )
    run_command(runner.run(orch_options, options, serving))


def metadata_server(address: str) -> InstalledServer:
    """`--gcp-metadata-server`, checked."""
    from gw.translator.options import InstalledServer

    try:
        return InstalledServer.parse(address, 80)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--gcp-metadata-server") from None


async def _serve_folder(folder: Path, options: Options, serving: Serving) -> None:
    from gw import lifecycle
    from gw.servers import controlplane_servers

    servers = controlplane_servers(folder, options, serving, wait_first_translation=True)
    await lifecycle.serve(servers.servers)


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
    ] = defaults.NAMESPACE,
    once: Annotated[bool, typer.Option(help="Write the upstreams once and exit.")] = False,
    log_level: LogLevel = defaults.LOG_LEVEL,
) -> None:
    """Run discovery alone: keep an Upstream for every service port, as a manifest in
    FOLDER/discovered/ (--dir) or as a custom resource in the cluster (--orch). Upstreams
    edited by hand are left alone."""
    from gw import lifecycle
    from gw.discovery import runner

    if (folder is None) == (not orch):
        raise typer.BadParameter("give either --dir FOLDER or --orch")
    configure_logging(log_level)
    if folder is not None and once:
        asyncio.run(runner.run(folder, namespace, once=True))
        return

    async def discover() -> None:
        if folder is not None:
            await runner.run(folder, namespace)
            return
        from gw.orch import discovery
        from gw.orch.client import connect

        client = connect(kubeconfig)
        try:
            await discovery.run(client, namespace)
        finally:
            await client.close()

    run_command(lifecycle.serve([lifecycle.TaskServer("discovery", discover)]))


@app.command()
def proxy(
    xds: Annotated[
        str, typer.Option(help="Control plane xDS address: host:port, or unix:<socket path>.")
    ] = defaults.XDS_ADDRESS,
    admin_host: Annotated[
        str, typer.Option(help="Envoy admin address, or unix:<socket path>.")
    ] = defaults.LOOPBACK,
    admin_port: int = defaults.PROXY_ADMIN_PORT,
    name: Annotated[
        str | None,
        typer.Option(
            help="Proxy name, as a Gateway's proxyNames says: sets the role to "
            f"{defaults.NAMESPACE}~NAME (default {defaults.PROXY_NAME})."
        ),
    ] = None,
    role: Annotated[
        str, typer.Option(help="xDS role <namespace>~<proxy name>; --name overrides it.")
    ] = defaults.PROXY_ROLE,
    node_id: Annotated[str | None, typer.Option(help="Default: <proxy name>-<host>-<pid>.")] = None,
    log_level: str = defaults.LOG_LEVEL,
    concurrency: int | None = None,
    xds_certs: XdsCerts = None,
    insecure_xds: InsecureXds = False,
    global_downstream_max_connections: MaxConnections = defaults.GLOBAL_DOWNSTREAM_MAX_CONNECTIONS,
) -> None:
    """Run a gateway proxy (Envoy) fed by the control plane at XDS."""
    import tempfile

    from gw import lifecycle
    from gw.proxy.bootstrap import BootstrapOptions
    from gw.proxy.supervisor import EnvoySupervisor, ProxyOptions
    from gw.proxy.xds_tls import XdsTls
    from gw.xds.tls import namespace_of, server_name

    configure_logging(defaults.LOG_LEVEL)
    refuse_plaintext(xds, xds_certs, insecure_xds)
    if name is not None:
        role = f"{role.partition('~')[0]}~{name}"
    proxy_name = role.partition("~")[2] or defaults.PROXY_NAME
    host, _, port = xds.rpartition(":")
    if xds.startswith("unix:"):
        host, port = xds, "0"
    workdir = Path(tempfile.mkdtemp(prefix="gw-proxy-"))
    tls = None
    if xds_certs is not None:
        tls = XdsTls(xds_certs.resolve(), workdir, server_name(namespace_of(role)))
    options = ProxyOptions(
        bootstrap=BootstrapOptions(
            node_id=node_id or f"{proxy_name}-{socket.gethostname()}-{os.getpid()}",
            role=role,
            xds_host=host.strip("[]"),
            xds_port=int(port),
            admin_host=admin_host,
            admin_port=admin_port,
            xds_tls=tls,
            max_downstream_connections=global_downstream_max_connections,
        ),
        log_level=log_level,
        concurrency=concurrency,
        workdir=workdir,
    )
    supervisor = EnvoySupervisor(options)
    envoy = lifecycle.TaskServer("envoy", supervisor.run, stop=supervisor.stop)
    run_command(lifecycle.serve([envoy]))


XdsAddress = Annotated[str, typer.Option(help="Control plane xDS address, host:port.")]
LogFile = Annotated[
    Path | None,
    typer.Option(help="Log to this file at the log level (and warnings to stderr)."),
]
Role = Annotated[str, typer.Option(help="xDS role to ask configuration for.")]


@app.command()
def extauth(
    xds: XdsAddress = defaults.XDS_ADDRESS,
    bind: Annotated[
        str, typer.Option(help="Address the ext_authz server listens on.")
    ] = defaults.ANY_ADDRESS,
    port: Annotated[int, typer.Option(help="ext_authz gRPC port.")] = defaults.EXTAUTH_PORT,
    role: Role = defaults.EXTAUTH_ROLE,
    log_level: LogLevel = defaults.LOG_LEVEL,
    xds_certs: XdsCerts = None,
    insecure_xds: InsecureXds = False,
    log_file: LogFile = None,
    session_cache: Annotated[
        float,
        typer.Option(
            help="Seconds a Redis session read stays in memory (0: read Redis on every check)."
        ),
    ] = 2.0,
    http_port: Annotated[
        int,
        typer.Option(
            help="Also answer checks over plain HTTP/1.1 on this port (0: off), for the "
            "AuthConfigs that need only the request; cheaper per check than gRPC."
        ),
    ] = 0,
) -> None:
    """Run the external auth server (OIDC logins for Envoy's ext_authz), configured by the
    control plane at XDS."""
    from gw import lifecycle
    from gw.extauth.server import extauth_servers

    configure_logging(log_level, log_file)
    placement = _placement(bind, port, xds, role, xds_certs, insecure_xds)

    async def serve() -> None:
        await lifecycle.serve(
            extauth_servers(placement, session_cache=session_cache, http_port=http_port or None)
        )

    run_command(serve(), uvloop=True)


@app.command()
def ratelimit(
    xds: XdsAddress = defaults.XDS_ADDRESS,
    bind: Annotated[
        str, typer.Option(help="Address the rate-limit server listens on.")
    ] = defaults.ANY_ADDRESS,
    port: Annotated[int, typer.Option(help="Rate-limit gRPC port.")] = defaults.RATELIMIT_PORT,
    redis: Annotated[
        str, typer.Option(envvar="REDIS_URL", help="Redis (host:port) holding the counters.")
    ] = defaults.REDIS,
    role: Role = defaults.RATELIMIT_ROLE,
    log_level: LogLevel = defaults.LOG_LEVEL,
    xds_certs: XdsCerts = None,
    insecure_xds: InsecureXds = False,
    log_file: LogFile = None,
) -> None:
    """Run the rate-limit server (Envoy's global rate-limit service, counters in Redis),
    configured by the control plane at XDS."""
    from gw.ratelimit.server import ratelimit_server

    configure_logging(log_level, log_file)
    placement = _placement(bind, port, xds, role, xds_certs, insecure_xds)
    run_command(_serve_one(lambda: ratelimit_server(placement, redis)), uvloop=True)


def _placement(
    bind: str, port: int, xds: str, role: str, certs: Path | None, insecure: bool
) -> Placement:
    from gw.xds.component import Placement

    return Placement(
        bind=bind, port=port, xds_address=xds, role=role, xds_certs=certs, insecure_xds=insecure
    )


async def _serve_one(build: Callable[[], Server]) -> None:
    """Serve what `build` makes, built in the event loop that serves it."""
    from gw import lifecycle

    await lifecycle.serve([build()])


ProxyNames = Annotated[
    list[str] | None,
    typer.Option(
        "--proxy", help=f"A proxy to issue for (repeatable; default {defaults.PROXY_NAME})."
    ),
]


@app.command()
def certgen(
    out: Annotated[
        Path | None,
        typer.Option(help="Write into this folder: ca/ and a folder per party.", file_okay=False),
    ] = None,
    orch: Annotated[
        bool, typer.Option("--orch", help="Write into the Secrets gw-xds-* of the namespace.")
    ] = False,
    kubeconfig: Kubeconfig = None,
    namespace: GatewayNamespace = defaults.NAMESPACE,
    proxy: ProxyNames = None,
    rotate_ca: Annotated[
        bool, typer.Option(help="Make a new CA (the previous one stays trusted until it expires).")
    ] = False,
    validity_days: Annotated[int, typer.Option(help="Days the certificates are valid.")] = 365,
    log_level: LogLevel = defaults.LOG_LEVEL,
) -> None:
    """Issue the certificates of mutual TLS on xDS: the control plane's (controlplane), and
    a client certificate for extauth, ratelimit and each proxy, naming its role; each party
    gets ca.crt, tls.crt and tls.key. Run again to rotate them: the CA is kept, so old and
    new certificates work together while the new ones spread."""
    from gw.cli.xds_tls import issue

    if (out is None) == (not orch):
        raise typer.BadParameter("give either --out FOLDER or --orch")
    configure_logging(log_level)
    proxies = tuple(proxy or (defaults.PROXY_NAME,))
    written = issue(
        out, kubeconfig, namespace, proxies, rotate_ca=rotate_ca, validity_days=validity_days
    )
    typer.echo("\n".join(written))


@app.command()
def echo(
    host: str = defaults.LOOPBACK,
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

    from gw.asgi import AsgiServer, quiet_config
    from gw.echo import build_app

    if (tls_cert is None) != (tls_key is None):
        raise typer.BadParameter("--tls-cert and --tls-key go together")
    config = quiet_config(
        build_app(name),
        host,
        port,
        # Show the request as it arrived: the scheme of this connection, not x-forwarded-*.
        proxy_headers=False,
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
        ssl_ca_certs=str(tls_client_ca) if tls_client_ca else None,
        ssl_cert_reqs=ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
    )
    run_command(_serve_one(lambda: AsgiServer("echo", config)))


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
