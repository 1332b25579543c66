"""`gwctl proxy ...`: the gateway proxy's address, what it is served, what it holds, its
logs and statistics (SPEC.md "Command-line tool", REFERENCE.md §7.4)."""

from __future__ import annotations

import contextlib
import json
from typing import Annotated
from urllib.parse import urlsplit

import httpx
import typer

from gw.cli.command import (
    DEFAULT_NAMESPACE,
    DEFAULT_PROXY,
    AdminUrl,
    DataOutput,
    Namespace,
    ProxyName,
    connect,
    emit,
    fail,
    to_yaml,
    warn,
)
from gw.cli.install import Install, InstallError

app = typer.Typer(help="Inspect the gateway proxy.", no_args_is_help=True)

PortName = Annotated[str, typer.Option("--port", help="Name of the proxy port: http or https.")]


@app.command()
def url(
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    port: PortName = "http",
    admin_url: AdminUrl = None,
) -> None:
    """Print the URL of the gateway proxy."""
    typer.echo(_proxy_url(connect(admin_url), name, namespace, port))


@app.command()
def address(
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    port: PortName = "http",
    admin_url: AdminUrl = None,
) -> None:
    """Print the address of the gateway proxy as host:port."""
    parts = urlsplit(_proxy_url(connect(admin_url), name, namespace, port))
    typer.echo(parts.netloc)


def _proxy_url(install: Install, name: str, namespace: str, port: str) -> str:
    try:
        return install.proxy_url(name, namespace, port)
    except InstallError as exc:
        fail(str(exc))


@app.command("served-config")
def served_config_command(
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    output: Annotated[DataOutput, typer.Option("-o", "--output")] = DataOutput.yaml,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the xDS server.")] = 5.0,
    admin_url: AdminUrl = None,
) -> None:
    """Print the configuration served by the control plane.

    Fetched over xDS as a proxy would fetch it: clusters, endpoints, listeners, routes, and
    the names of the secrets.
    """
    from gw.cli import served_config  # loads the xDS protos: only for this command

    install = connect(admin_url)
    role = f"{namespace}~{name}"
    try:
        with install.xds_address() as xds:
            config = served_config.fetch(xds, role, timeout)
    except (InstallError, served_config.ServedConfigError) as exc:
        fail(str(exc))
    if output is DataOutput.json:
        emit({"role": role, **config}, output)
        return
    sections = [f"#role: {role}"]
    for section in served_config.SECTIONS:
        sections.append(f"#{section}\n" + to_yaml(config[section]))
    typer.echo("\n\n".join(s.rstrip("\n") for s in sections))


@app.command()
def dump(
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    include_eds: Annotated[
        bool, typer.Option("--include-eds", help="Add upstream endpoints (EDS).")
    ] = False,
    admin_url: AdminUrl = None,
) -> None:
    """Print the configuration held by a proxy instance.

    Envoy's own `/config_dump` (JSON); Envoy redacts private keys in it, and the session
    pass keys (symmetric JWKS) are hidden here.
    """
    query = "?include_eds" if include_eds else ""
    typer.echo(_admin(connect(admin_url), name, namespace, "POST", "/config_dump" + query))


@app.command()
def stats(
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    admin_url: AdminUrl = None,
) -> None:
    """Print proxy statistics (Envoy's /stats)."""
    typer.echo(_admin(connect(admin_url), name, namespace, "GET", "/stats"), nl=False)


@app.command()
def logs(
    name: ProxyName = DEFAULT_PROXY,
    namespace: Namespace = DEFAULT_NAMESPACE,
    follow: Annotated[
        bool, typer.Option("-f", "--follow", help="Keep printing new lines.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug/--no-debug", "-d", help="Set the proxy log level to debug first."),
    ] = True,
    admin_url: AdminUrl = None,
) -> None:
    """Print (with -f: tail) the proxy's log, after setting its log level to debug.

    At debug level Envoy logs request and response headers: do not leave a production
    proxy at debug (`curl -X POST <proxy admin>/logging?level=info` sets it back).
    """
    install = connect(admin_url)
    if debug:
        _admin(install, name, namespace, "POST", "/logging?level=debug")
        warn(f"proxy {namespace}.{name}: log level set to debug")
    try:
        source = install.proxy_log(name, namespace)
    except InstallError as exc:
        fail(str(exc))
    lines = source.follow() if follow else source.lines()
    with contextlib.suppress(KeyboardInterrupt):
        for line in lines:
            typer.echo(line)


def _admin(install: Install, name: str, namespace: str, method: str, path: str) -> str:
    """Call the proxy's admin interface; its answer as text."""
    try:
        with install.proxy_admin(name, namespace) as base:
            response = install.http.request(method, base + path, timeout=30)
    except InstallError as exc:
        fail(str(exc))
    except httpx.HTTPError as exc:
        fail(f"cannot reach the proxy admin interface of {namespace}.{name}: {exc}")
    if response.status_code != 200:
        fail(
            f"the proxy admin interface answered {method} {path} with "
            f"{response.status_code}: {response.text.strip()}"
        )
    if path.startswith("/config_dump"):
        from gw.translator.dump import hide_key_material  # loads the protos: only here

        # Re-indent consistently; the content is Envoy's, session pass keys and the values
        # of headers from secrets hidden.
        return json.dumps(hide_key_material(response.json()), indent=2)
    return response.text
