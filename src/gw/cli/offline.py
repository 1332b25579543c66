"""`gwctl validate` and `gwctl translate`: what a folder of manifests would do, without an
install. Both run the control plane's own pipeline, store → discovery → `translate()`: the
statuses (upstreams discovered from the folder's Services included) and the Envoy
configuration are exactly what `gw up` would produce from the same files. Both exit 1
when a resource would be Rejected or a manifest cannot be read, so they can gate a change
in CI before it is applied.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gw.cli.command import DataOutput, Output, OutputOpt, emit, fail
from gw.cli.get import findings
from gw.cli.tables import render_table

if TYPE_CHECKING:
    from gw.snapshot import Snapshot
    from gw.translator.translation import Result

# The store and the translator are imported where used, so that other gwctl commands do
# not pay for loading them.

ManifestPath = Annotated[
    Path,
    typer.Option(
        "-f", "--file", exists=True, help="A folder of manifests (read recursively) or one file."
    ),
]
TARGETS = ("reports", "proxy", "xds")
Discovery = Annotated[
    bool,
    typer.Option(
        help="Discover upstreams from the folder's Services, as `gw up` does (turn off to "
        "match `gw up --no-discovery`)."
    ),
]


def validate(
    path: ManifestPath,
    output: OutputOpt = Output.table,
    strict: Annotated[bool, typer.Option(help="Fail on warnings too.")] = False,
    discovery: Discovery = True,
) -> None:
    """Check manifests offline, without an install: print every resource's status.

    Exits 1 when a resource would be Rejected (with --strict: or have warnings) or a
    manifest cannot be read.
    """
    snapshot, result = run(path, discovery=discovery)
    reports = reports_data(snapshot, result)
    rows = [
        [r["kind"], r["namespace"], r["name"], "\n".join([r["state"], *r["findings"]])]
        for r in reports["statuses"]
    ]
    rows += [
        ["(file)", "", e["source"] or "?", f"Unreadable\n{e['message']}"]
        for e in reports["inputErrors"]
        if e["resource"] is None
    ]
    emit(reports, output, render_table(["Kind", "Namespace", "Name", "Status"], rows))
    rejected = [r for r in reports["statuses"] if r["state"] == "Rejected"]
    warned = [r for r in reports["statuses"] if r["state"] == "Warning"]
    unreadable = [e for e in reports["inputErrors"] if e["resource"] is None]
    if rejected or unreadable or (strict and warned):
        parts = [f"{len(rejected)} rejected", f"{len(unreadable)} unreadable manifests"]
        if strict:
            parts.append(f"{len(warned)} with warnings")
        fail("validation failed: " + ", ".join(parts))
    if output in (Output.table, Output.wide):
        typer.echo(f"{len(reports['statuses'])} resources valid ({len(warned)} with warnings)")


def translate_command(
    path: ManifestPath,
    to: Annotated[
        str, typer.Option("--to", help="What to print, comma-separated: reports, proxy, xds.")
    ] = "reports,xds",
    output: Annotated[DataOutput, typer.Option("-o", "--output")] = DataOutput.yaml,
    discovery: Discovery = True,
) -> None:
    """Print what manifests would produce, without an install.

    `reports`: every status; `proxy`: the Proxy IR; `xds`: the Envoy configuration. Key
    material is redacted. Exits 1 when anything would be Rejected.
    """
    wanted = [t.strip() for t in to.split(",") if t.strip()]
    unknown = sorted(set(wanted) - set(TARGETS))
    if unknown or not wanted:
        fail(f"--to takes {', '.join(TARGETS)}, not {', '.join(unknown) or 'nothing'}")
    from gw.translator.dump import proxy_to_data, xds_to_data

    snapshot, result = run(path, discovery=discovery)
    data: dict[str, Any] = {}
    if "reports" in wanted:
        data["reports"] = reports_data(snapshot, result)
    several = len(result.proxies) > 1
    if "proxy" in wanted:
        data["proxy"] = proxy_to_data(result.proxy)
        if several:  # the default proxy above; every proxy by name here
            data["proxies"] = {p.name: proxy_to_data(p) for p in result.proxies}
    if "xds" in wanted:
        data["xds"] = xds_to_data(result.xds)
        if several:
            data["served"] = {role: xds_to_data(x) for role, x in result.served.items()}
    emit(data, output)
    unreadable = any(e.key is None for e in snapshot.errors)
    if unreadable or any(result.reports.rejected(k) for k in result.statuses):
        raise typer.Exit(1)


def run(path: Path, *, discovery: bool = True) -> tuple[Snapshot, Result]:
    """What the control plane does with the files: discovery (as `gw up` runs it, unless
    turned off as with `gw up --no-discovery`), then translation, with the extauth and
    rate-limit servers `gw up` runs."""
    from gw.discovery import ServiceDiscovery
    from gw.translator.options import UP_EXTAUTH, UP_RATELIMIT, Options
    from gw.translator.translation import translate

    options = Options(now=time.time(), extauth_server=UP_EXTAUTH, ratelimit_server=UP_RATELIMIT)
    snapshot = load(path)
    if discovery:
        snapshot = ServiceDiscovery(options.namespace)(snapshot)
    return snapshot, translate(snapshot, options)


def load(path: Path) -> Snapshot:
    """Read a folder, or one file (file names in messages stay as the user wrote them)."""
    from gw.store.directory import MANIFEST_SUFFIXES, DirectoryStore

    if path.is_dir():
        return DirectoryStore(path, read_workers=True).scan()
    if not path.name.endswith(MANIFEST_SUFFIXES):
        fail(f"{path} is not a manifest file ({', '.join(MANIFEST_SUFFIXES)})")
    with tempfile.TemporaryDirectory(prefix="gwctl-") as tmp:
        os.symlink(path.resolve(), Path(tmp) / path.name)
        return DirectoryStore(Path(tmp)).scan()


def reports_data(snapshot: Snapshot, result: Result) -> dict[str, Any]:
    statuses = []
    for key, status in sorted(result.statuses.items()):
        data = status.model_dump(by_alias=True, mode="json")
        source = snapshot.sources.get(key)
        statuses.append(
            {
                "kind": key.kind,
                "namespace": key.namespace,
                "name": key.name,
                "source": str(source) if source else None,
                "state": status.state.value,
                "findings": findings(data),
                "reason": status.reason,
            }
        )
    errors = [
        {
            "source": str(e.source) if e.source else None,
            "message": e.message,
            "resource": str(e.key) if e.key else None,
        }
        for e in snapshot.errors
    ]
    return {"statuses": statuses, "inputErrors": errors}
