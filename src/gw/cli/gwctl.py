"""`gwctl`: inspect and operate a gw installation (SPEC.md "Command-line tool").

This module only assembles the command groups; each lives in its own module:
`get`, `check`, `proxy_cmd`, `create`, `debug`, `offline` (validate, translate). Where
an installation's pieces are, and how to reach them, is `install.py`'s business.
Shell completion: `gwctl --install-completion` (or `--show-completion SHELL`).
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

from gw import __version__
from gw.cli import (
    add_route,
    apply,
    check,
    create,
    debug,
    edit,
    explain,
    get,
    get_gateways,  # noqa: F401 (adds `get gateways` and `get proxy` to get.app)
    get_matchable,  # noqa: F401 (adds `get matchablehttpgateway` and the like)
    get_more,  # noqa: F401 (adds `get authconfig`, `secret`, `settings` ...)
    get_options,  # noqa: F401 (adds `get virtualhostoption` and `get routeoption`)
    get_routes,  # noqa: F401 (adds `get virtualservice`, `routetable`, `upstreamgroup`)
    offline,
    proxy_cmd,
    upstream_secrets,  # noqa: F401 (adds `create secret header`, `aws` and `azure`)
)
from gw.cli.command import (
    AdminUrl,
    DataOutput,
    emit,
    home,
    selected_instance,
    use_instance,
    version_mismatch,
    warn,
)
from gw.cli.install import InstallError, locate

app = typer.Typer(
    help="gwctl: inspect and operate a gw installation.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(get.app, name="get")
app.add_typer(proxy_cmd.app, name="proxy")
app.add_typer(debug.app, name="debug")
app.add_typer(create.app, name="create")
app.add_typer(add_route.add_app, name="add")
app.add_typer(add_route.remove_app, name="remove")
app.add_typer(add_route.remove_app, name="rm", hidden=True)
app.add_typer(add_route.route_app, name="route")
app.add_typer(edit.app, name="edit")
app.command("check")(check.check)
app.command("apply")(apply.apply)
app.command("explain")(explain.explain_command)
app.command("delete")(apply.delete)


@app.callback()
def options(
    instance: Annotated[
        str | None,
        typer.Option(
            "--instance",
            envvar="GW_INSTANCE",
            help="The `gw up` instance to work on (default: the one serving the current "
            "folder, else the only one running).",
        ),
    ] = None,
) -> None:
    """gwctl: inspect and operate a gw installation."""
    use_instance(instance)


app.command("validate")(offline.validate)
app.command("translate")(offline.translate_command)


@app.command()
def version(
    output: Annotated[DataOutput | None, typer.Option("-o", "--output")] = None,
    admin_url: AdminUrl = None,
) -> None:
    """Print client and server versions; warn (on stderr) when they differ: they must match."""
    server: str | None = None
    problem = ""
    try:
        server = locate(home(), admin_url, selected_instance()).server_version()
    except InstallError as exc:
        problem = f"Warning: {exc}"
    if output is not None:
        emit({"client": {"version": __version__}, "server": {"version": server}}, output)
    else:
        typer.echo(f"Client version: {__version__}")
        if server is None:
            typer.echo("Server: version undefined, could not find any version of gw running")
        else:
            typer.echo(f"Server version: {server}")
    if problem:
        warn(problem)
    if server is not None and server != __version__:
        warn(version_mismatch(__version__, server))


def main() -> None:
    # The store and translator log what gwctl already prints (an unreadable file, say):
    # only errors of gwctl's own libraries reach the terminal.
    logging.basicConfig(level=logging.ERROR, format="gwctl: %(name)s: %(message)s")
    try:
        app(prog_name="gwctl")
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
