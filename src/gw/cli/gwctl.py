"""`gwctl`: inspect and operate a gw installation (SPEC.md "Command-line tool")."""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import yaml

from gw import __version__
from gw.cli.install import Install, InstallError
from gw.cli.tables import render_table

app = typer.Typer(
    help="gwctl: inspect and operate a gw installation.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
get_app = typer.Typer(help="List resources with their status.", no_args_is_help=True)
app.add_typer(get_app, name="get")

CONTROLLER_NAMESPACE = "gw-system"


class Output(StrEnum):
    table = "table"
    yaml = "yaml"
    json = "json"


AdminUrl = Annotated[
    str | None,
    typer.Option(
        "--admin-url",
        envvar="GW_ADMIN_URL",
        help="Control plane admin URL (default: from the running `gw up`).",
    ),
]
OutputOpt = Annotated[Output, typer.Option("-o", "--output")]


def home() -> Path:
    return Path(os.environ.get("GW_HOME") or Path.home() / ".gw")


def locate(admin_url: str | None) -> Install:
    try:
        return Install.locate(home(), admin_url)
    except InstallError as exc:
        fail(str(exc))


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


# --- get ------------------------------------------------------------------------------------


def _resources(install: Install, kind: str, name: str | None) -> list[dict[str, Any]]:
    """Resources of a kind as manifests, each with its status under `status.statuses`."""
    try:
        resources = install.admin("/snapshots/input")
        statuses = install.admin("/statuses")
    except InstallError as exc:
        fail(str(exc))
    by_key = {(s["kind"], s["namespace"], s["name"]): s["status"] for s in statuses["resources"]}
    out = []
    for resource in resources:
        meta = resource["metadata"]
        if resource["kind"] != kind or (name and meta["name"] != name):
            continue
        status = by_key.get((kind, meta.get("namespace", "default"), meta["name"]))
        if status is not None:
            resource = {**resource, "status": {"statuses": {CONTROLLER_NAMESPACE: status}}}
        out.append(resource)
    if name and not out:
        fail(f"{kind} {name!r} not found")
    return out


def _print(resources: list[dict[str, Any]], output: Output, table: str) -> None:
    if output is Output.json:
        typer.echo(json.dumps(resources, indent=2))
    elif output is Output.yaml:
        typer.echo(yaml.safe_dump_all(resources, sort_keys=False, explicit_start=False), nl=False)
    else:
        typer.echo(table)


@get_app.command("upstreams")
@get_app.command("upstream", hidden=True)
@get_app.command("us", hidden=True)
def get_upstreams(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List upstreams with type, status and details."""
    resources = _resources(locate(admin_url), "Upstream", name)
    rows = [
        [r["metadata"]["name"], _upstream_type(r), _state(r), _upstream_details(r)]
        for r in resources
    ]
    _print(resources, output, render_table(["Upstream", "Type", "Status", "Details"], rows))


@get_app.command("virtualservice")
@get_app.command("virtualservices", hidden=True)
@get_app.command("vs", hidden=True)
def get_virtualservice(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List virtual services with domains, SSL, status and routes."""
    resources = _resources(locate(admin_url), "VirtualService", name)
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        vhost = spec.get("virtualHost") or {}
        rows.append(
            [
                r["metadata"]["name"],
                spec.get("displayName", ""),
                ", ".join(vhost.get("domains") or ["*"]),
                _ssl(spec),
                _state(r),
                "",
                "\n".join(
                    _route_line(route, r["metadata"].get("namespace", "default"))
                    for route in vhost.get("routes", [])
                ),
            ]
        )
    headers = [
        "Virtual Service",
        "Display Name",
        "Domains",
        "SSL",
        "Status",
        "ListenerPlugins",
        "Routes",
    ]
    _print(resources, output, render_table(headers, rows))


def _state(resource: dict[str, Any]) -> str:
    status = resource.get("status", {}).get("statuses", {}).get(CONTROLLER_NAMESPACE)
    if status is None:
        return "Pending"
    lines = [status["state"]]
    if status["state"] != "Accepted":
        for line in status.get("reason", "").splitlines():
            line = line.strip()
            if line and not line.endswith(("occurred:", "warning:")):
                lines.append(line.removeprefix("* "))
    return "\n".join(lines)


def _upstream_type(resource: dict[str, Any]) -> str:
    spec = resource.get("spec", {})
    if "orch" in spec:
        return "Orch"
    if "static" in spec:
        return "Static"
    return "Unknown"


def _upstream_details(resource: dict[str, Any]) -> str:
    spec = resource.get("spec", {})
    if "orch" in spec:
        orch = spec["orch"]
        lines = [
            f"svc name:      {orch.get('serviceName', '')}",
            f"svc namespace: {orch.get('serviceNamespace', '')}",
            f"port:          {orch.get('servicePort', '')}",
        ]
        selector = orch.get("selector") or {}
        if selector:
            lines.append(
                "selector:      " + ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
            )
        return "\n".join(lines) + "\n"
    if "static" in spec:
        hosts = spec["static"].get("hosts", [])
        return "\n".join(["hosts:", *(f"- {h['addr']}:{h['port']}" for h in hosts)])
    return ""


def _ssl(spec: dict[str, Any]) -> str:
    ssl = spec.get("sslConfig")
    if not ssl:
        return "none"
    if "secretRef" in ssl:
        return "secret_ref"
    if "sslFiles" in ssl:
        return "ssl_files"
    return "sds"


def _route_line(route: dict[str, Any], namespace: str) -> str:
    matchers = route.get("matchers") or [{"prefix": "/"}]
    match = ",".join(m.get("prefix") or m.get("exact") or m.get("regex") or "?" for m in matchers)
    name = f"{route['name']}: " if route.get("name") else ""
    return f"{name}{match} -> {_destination(route, namespace)}"


def _destination(route: dict[str, Any], namespace: str) -> str:
    if "directResponseAction" in route:
        return str(route["directResponseAction"].get("status"))
    if "redirectAction" in route:
        return str(route["redirectAction"].get("hostRedirect", "redirect"))
    action = route.get("routeAction", {})
    if "multi" in action:
        return f"{len(action['multi'].get('destinations', []))} destinations"
    if "upstreamGroup" in action:
        ref = action["upstreamGroup"]
        return f"upstream group: {ref['name']}.{ref.get('namespace') or namespace}"
    single = action.get("single", {})
    if "upstream" in single:
        ref = single["upstream"]
        return f"{ref.get('namespace') or namespace}.{ref['name']} (upstream)"
    if "orch" in single:
        ref = single["orch"]["ref"]
        return f"{ref.get('namespace') or namespace}.{ref['name']} (service)"
    return "?"


# --- version --------------------------------------------------------------------------------


@app.command()
def version(admin_url: AdminUrl = None) -> None:
    """Print client and server versions; warn when they differ (they must match)."""
    typer.echo(f"Client version: {__version__}")
    try:
        server = locate(admin_url).admin("/version")["version"]
    except (InstallError, typer.Exit):
        typer.echo("Server: version undefined, could not find any version of gw running")
        return
    typer.echo(f"Server version: {server}")
    if server != __version__:
        typer.echo(version_mismatch(__version__, server), err=True)


def version_mismatch(client: str, server: str) -> str:
    return (
        "----------\n"
        f"gwctl binary version ({client}) differs from server components ({server}).\n"
        "gwctl must match the installed version; consider installing gwctl "
        f"{server}.\n----------"
    )


def main() -> None:
    try:
        app()
    except BrokenPipeError:
        sys.exit(0)


if __name__ == "__main__":
    main()
