"""What every gwctl command shares: the options, the output formats, reaching the install
(with the version check the established tool runs first), and failing with a message.

Anything meant for scripts goes to stdout; warnings and errors go to stderr, so that
`$(gwctl proxy url)` stays clean.
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import yaml

from gw import __version__
from gw.cli.install import CONTROLLER_NAMESPACE, PROXY_NAME, Install, InstallError, locate


class Output(StrEnum):
    table = "table"
    yaml = "yaml"
    json = "json"
    #: The established tool's other names, which its guides use: `kube-yaml` is gw's YAML
    #: (already the orchestrator's manifest shape, status included), `wide` its table.
    kube_yaml = "kube-yaml"
    wide = "wide"


class DataOutput(StrEnum):
    """For commands whose result is data only (no table)."""

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
OutputOpt = Annotated[
    Output, typer.Option("-o", "--output", help="table (or wide), yaml (or kube-yaml) or json.")
]
Namespace = Annotated[
    str, typer.Option("-n", "--namespace", help="Namespace of the proxy deployment.")
]
ProxyName = Annotated[str, typer.Option("--name", help="Proxy deployment name.")]

DEFAULT_NAMESPACE = CONTROLLER_NAMESPACE
DEFAULT_PROXY = PROXY_NAME


def home() -> Path:
    return Path(os.environ.get("GW_HOME") or Path.home() / ".gw")


#: `gwctl --instance NAME` (or `GW_INSTANCE`), set by gwctl's top-level options for the
#: command that runs in this process.
_instance: str | None = None


def use_instance(name: str | None) -> None:
    global _instance
    _instance = name or None


def selected_instance() -> str | None:
    """The `gw up` instance to work on, when one was named."""
    return _instance


def connect(admin_url: str | None, *, check_version: bool = True) -> Install:
    """The install to work on; warns on stderr when its version differs from gwctl's."""
    try:
        install = locate(home(), admin_url, selected_instance())
    except InstallError as exc:
        fail(str(exc))
    if check_version:
        try:
            server = install.server_version()
        except InstallError as exc:
            warn(f"Warning: Could not determine gw server version: {exc}")
        else:
            if server != __version__:
                warn(version_mismatch(__version__, server))
    return install


def version_mismatch(client: str, server: str) -> str:
    return (
        "----------\n"
        f"gwctl binary version ({client}) differs from server components ({server}).\n"
        f"gwctl must match the installed version; consider installing gwctl {server}.\n"
        "----------"
    )


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def fail_many(messages: list[str]) -> NoReturn:
    """The established multi-error shape: `Error: N errors occurred:` then `\\t* <message>`."""
    noun = "error" if len(messages) == 1 else "errors"
    lines = [f"Error: {len(messages)} {noun} occurred:"]
    lines += [f"\t* {m}" for m in messages]
    typer.echo("\n".join(lines) + "\n", err=True)
    raise typer.Exit(1)


def warn(message: str) -> None:
    typer.echo(message, err=True)


def emit(data: Any, output: StrEnum, table: str | None = None) -> None:
    """Print `data` as YAML or JSON, or `table` for the table output."""
    if output.value == "json":
        typer.echo(json.dumps(data, indent=2))
    elif output.value in ("yaml", "kube-yaml"):
        typer.echo(to_yaml(data), nl=False)
    else:
        typer.echo(table if table is not None else to_yaml(data).rstrip("\n"))


def to_yaml(data: Any) -> str:
    """YAML that reads like a manifest: block style, literal blocks for multi-line text."""
    if data and isinstance(data, list) and all(isinstance(d, dict) and "kind" in d for d in data):
        return yaml.dump_all(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False)


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
