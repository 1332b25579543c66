"""`gwctl debug logs|yaml`: everything needed for a bug report, in one file each.

Neither ever holds a secret value: resources come from the admin API, which redacts them,
and gw does not log secret values.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from gw import __version__
from gw.cli.command import AdminUrl, connect, fail, to_yaml, warn
from gw.cli.get import resources_of
from gw.cli.install import CONTROLLER_NAMESPACE, InstallError

app = typer.Typer(help="Collect logs and configuration for debugging.", no_args_is_help=True)

OutFile = Annotated[
    Path | None, typer.Option("-f", "--file", help="Write here instead of to stdout.")
]

#: A log line that starts a record: gw's `2026-01-01 10:00:00,123 LEVEL ...` or Envoy's
#: `[2026-01-01 10:00:00.123][pid][level][logger] ...`. Other lines continue the record
#: above them (tracebacks, multi-line Envoy dumps).
_RECORD = re.compile(
    r"^(?:\d{4}-\d\d-\d\d[ T][\d:.,]+ (?P<py>[A-Z]+) "
    r"|\[\d{4}-\d\d-\d\d [\d:.]+\]\[\d+\]\[(?P<envoy>[a-z]+)\])"
)
ERROR_LEVELS = frozenset({"error", "critical"})


@app.command("logs")
def debug_logs(
    file: OutFile = None,
    errors_only: Annotated[
        bool, typer.Option("--errors-only", help="Only error and critical records.")
    ] = False,
    admin_url: AdminUrl = None,
) -> None:
    """Collect the logs of all components (control plane, proxy, ...)."""
    install = connect(admin_url, check_version=False)
    try:
        sources = install.logs()
    except InstallError as exc:
        fail(str(exc))
    chunks = []
    for source in sources:
        lines = list(source.lines())
        if errors_only:
            lines = list(error_records(lines))
        chunks.append("\n".join([f"==> {source.name} <==", *lines]) + "\n")
    _write("\n".join(chunks), file, f"logs of {len(sources)} components")


def error_records(lines: Iterable[str]) -> Iterator[str]:
    """The lines of error and critical records, continuation lines included."""
    keep = False
    for line in lines:
        match = _RECORD.match(line)
        if match is not None:
            level = (match.group("py") or match.group("envoy") or "").lower()
            keep = level in ERROR_LEVELS
        if keep:
            yield line


@app.command("yaml")
def debug_yaml(file: OutFile = None, admin_url: AdminUrl = None) -> None:
    """Dump all relevant configuration.

    The install, every resource with its status (secret values redacted), manifests that
    cannot be read, and the generated Proxy, as multi-document YAML.
    """
    install = connect(admin_url, check_version=False)
    try:
        statuses = install.admin("/statuses")
        proxies = install.admin("/snapshots/proxies")
        server = install.server_version()
        described = install.describe()
    except InstallError as exc:
        fail(str(exc))
    header = [
        f"# gw debug dump, {datetime.datetime.now(datetime.UTC):%Y-%m-%dT%H:%M:%SZ}",
        f"# gwctl {__version__}, server {server}, {install.kind} install",
        *(f"#   {k}: {v}" for k, v in _flat(described)),
    ]
    for error in statuses["inputErrors"]:
        header.append(f"# cannot read {error['source'] or '?'}: {error['message']}")
    documents: list[dict[str, Any]] = []
    # Every kind the install holds, those only known from a status or a broken manifest too.
    kinds = sorted(
        {i["kind"] for i in statuses["inputs"]}
        | {r["kind"] for r in statuses["resources"]}
        | {e["resource"]["kind"] for e in statuses["inputErrors"] if e.get("resource")}
    )
    for kind in kinds:
        documents.extend(resources_of(install, kind, None))
    for proxy in proxies:
        documents.append(
            {
                "apiVersion": "gw.vendor.io/v1",
                "kind": "Proxy",
                "metadata": {
                    "name": proxy.get("name"),
                    "namespace": proxy.get("namespace", CONTROLLER_NAMESPACE),
                },
                "spec": proxy,
            }
        )
    _write("\n".join(header) + "\n---\n" + to_yaml(documents), file, "configuration")


def _flat(data: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _write(text: str, file: Path | None, what: str) -> None:
    if file is None:
        typer.echo(text, nl=False)
        return
    file.write_text(text, encoding="utf-8")
    warn(f"{what} written to {file}")
