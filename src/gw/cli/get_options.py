"""`gwctl get virtualhostoption|routeoption [NAME]`: the options resources virtual hosts and
routes refer to through `optionsConfigRefs`, with their status and the option fields each
one sets (the fields a referrer may take from it), as tables or manifests (`-o yaml|json`).
The established tool has no table for them; the columns follow `gwctl get routetable`. The
commands join the `gwctl get` group (`get.app`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, Output, OutputOpt, connect, emit
from gw.cli.get import app, resources_of, state_text
from gw.cli.tables import render_table

__all__ = ["get_route_options", "get_virtual_host_options", "options_table"]


@app.command("virtualhostoption")
@app.command("virtualhostoptions", hidden=True)
@app.command("vhopts", hidden=True)
def get_virtual_host_options(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List VirtualHostOptions with their status and the options they set."""
    resources = resources_of(connect(admin_url), "VirtualHostOption", name)
    emit(resources, output, options_table("Virtual Host Option", resources))


@app.command("routeoption")
@app.command("routeoptions", hidden=True)
@app.command("rtopts", hidden=True)
def get_route_options(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List RouteOptions with their status and the options they set."""
    resources = resources_of(connect(admin_url), "RouteOption", name)
    emit(resources, output, options_table("Route Option", resources))


def options_table(title: str, resources: list[dict[str, Any]]) -> str:
    rows = [
        [
            r["metadata"]["name"],
            state_text(r),
            "\n".join(sorted((r.get("spec", {}).get("options") or {}).keys())),
        ]
        for r in resources
    ]
    return render_table([title, "Status", "Options"], rows)
