"""`gwctl apply -f FILE|DIR` and `gwctl delete KIND NAME` (or `-f FILE|DIR`): change the
install's resources and print the status each one ends up with, as `kubectl apply` prints
what it did.

A folder install is changed in its files (`served_folder.py`: a resource is replaced or
removed in the document that holds it, a new one gets a file of its own); an orchestrator
install by server-side apply and delete through the API server. Either way gwctl then waits
(`--timeout`, 10 s by default) until the control plane has read the change and prints each
resource's status: `VirtualService default.shop configured: Rejected` and the findings, then
every other resource whose status the change moved (a VirtualService left without its
upstream). The exit status is 1 when a resource ends up Rejected, or the control plane has
not read the change in time.

A manifest gw cannot read (an unknown field, a missing name) is refused before anything is
written: in a folder the file would replace a good manifest with one that fails to load
after the next restart, and the orchestrator's webhook refuses it too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, connect, fail, fail_many
from gw.cli.get import findings
from gw.cli.install import Install, InstallError

Key = tuple[str, str, str]

Files = Annotated[
    list[Path] | None,
    typer.Option(
        "-f", "--filename", exists=True, help="A manifest file, or a folder (read recursively)."
    ),
]
Wait = Annotated[bool, typer.Option(help="Wait for the control plane to read the change.")]
Timeout = Annotated[float, typer.Option(help="Seconds to wait for the new statuses.")]


@dataclass(frozen=True, slots=True)
class Change:
    key: Key
    #: `created`, `configured`, `unchanged` or `deleted`.
    verb: str
    #: The resource as the control plane will show it (None: gone).
    expected: dict[str, Any] | None


def apply(
    filename: Files = None,
    wait: Wait = True,
    timeout: Timeout = 10.0,
    admin_url: AdminUrl = None,
) -> None:
    """Create or replace resources from manifests, then print the status of each."""
    if not filename:
        fail("give the manifests to apply with -f FILE or -f DIR")
    documents = _read(filename)
    install = connect(admin_url)
    before = _state(install)
    changes = []
    for path, text, manifest, expected in documents:
        key = _key(manifest)
        if before.resources.get(key) == expected and key not in before.broken:
            changes.append(Change(key, "unchanged", expected))
            continue
        try:
            created = install.apply(manifest, text)
        except InstallError as exc:
            fail(f"{path}: {exc}")
        changes.append(Change(key, "created" if created else "configured", expected))
    _report(install, before, changes, wait, timeout)


def delete(
    kind: Annotated[str | None, typer.Argument(help="Kind (vs, upstream, routetable ...).")] = None,
    name: Annotated[str | None, typer.Argument(help="Name of the resource.")] = None,
    namespace: Annotated[
        str | None, typer.Option("-n", "--namespace", help="Its namespace (default: the only one).")
    ] = None,
    filename: Files = None,
    wait: Wait = True,
    timeout: Timeout = 10.0,
    admin_url: AdminUrl = None,
) -> None:
    """Delete a resource (KIND NAME), or those of manifests (-f), then print what changed."""
    if filename and (kind or name):
        fail("give either KIND NAME or -f, not both")
    install = connect(admin_url)
    before = _state(install)
    if filename:
        keys = [_key(manifest) for _, _, manifest, _ in _read(filename)]
    elif kind and name:
        keys = [_find(before, _kind_name(kind), name, namespace)]
    else:
        fail("give the resource to delete as KIND NAME, or its manifests with -f")
    changes = []
    for key in keys:
        try:
            deleted = install.delete(*key)
        except InstallError as exc:
            fail(str(exc))
        if not deleted:
            fail(f"{key[0]} {key[1]}.{key[2]} not found")
        changes.append(Change(key, "deleted", None))
    _report(install, before, changes, wait, timeout)


# --- reading manifests ------------------------------------------------------------------


def _read(paths: list[Path]) -> list[tuple[Path, str, dict[str, Any], dict[str, Any]]]:
    """(file, YAML text, manifest, the resource as the control plane will show it) of every
    document; fails, naming each problem, when one is not a resource gw can read."""
    from gw import api
    from gw.cli import served_folder

    try:
        documents = served_folder.read_manifests(paths)
    except served_folder.EditError as exc:
        fail(str(exc))
    out, problems = [], []
    for path, number, text, manifest in documents:
        try:
            resource = api.parse_document(manifest)
        except api.ManifestError as exc:
            problems.append(f"{path}, document {number}: {exc.describe()}")
            continue
        except api.IgnoredDocument as exc:
            problems.append(f"{path}, document {number}: {exc}; gwctl applies gw's kinds only")
            continue
        shown = resource.model_dump(by_alias=True, exclude_none=True, mode="json")
        out.append((path, text, manifest, comparable(shown)))
    if problems:
        fail_many([*problems, "nothing was applied"])
    if not out:
        fail(f"no manifests in {', '.join(map(str, paths))}")
    return out


def _key(manifest: dict[str, Any]) -> Key:
    meta = manifest["metadata"]
    return (str(manifest["kind"]), str(meta.get("namespace") or "default"), str(meta["name"]))


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """What a change is recognised by: everything but the status and the metadata the
    orchestrator adds; a secret by its type and keys (the admin API hides the values)."""
    meta = data.get("metadata") or {}
    out = {k: v for k, v in data.items() if k not in ("status", "metadata")}
    out["labels"] = meta.get("labels") or {}
    if data.get("kind") == "Secret":
        for field in ("data", "stringData"):
            out[field] = sorted(data.get(field) or {})
    return out


def _kind_name(text: str) -> str:
    from gw import api

    wanted = text.lower()
    for model in api.KINDS:
        if wanted in (model.KIND.lower(), model.PLURAL, *model.SHORT_NAMES):
            return model.KIND
    known = ", ".join(sorted(m.KIND.lower() for m in api.KINDS))
    fail(f"unknown kind {text!r}; gw's kinds are {known}")


# --- the install's state ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class State:
    """What the control plane holds: resources as read, their statuses, broken manifests."""

    resources: dict[Key, dict[str, Any]]
    statuses: dict[Key, dict[str, Any]]
    #: Resources whose latest manifest could not be read, with the reason.
    broken: dict[Key, str]

    def known(self, key: Key) -> bool:
        return key in self.resources or key in self.statuses or key in self.broken


def _state(install: Install) -> State:
    try:
        inputs = install.admin("/snapshots/input")
        statuses = install.admin("/statuses")
    except InstallError as exc:
        fail(str(exc))
    return State(
        resources={_key(r): comparable(r) for r in inputs},
        statuses={_row_key(s): s["status"] for s in statuses["resources"]},
        broken={
            _row_key(e["resource"]): str(e["message"])
            for e in statuses["inputErrors"]
            if e.get("resource")
        },
    )


def _row_key(row: dict[str, Any]) -> Key:
    return (str(row["kind"]), str(row["namespace"]), str(row["name"]))


def _find(state: State, kind: str, name: str, namespace: str | None) -> Key:
    if namespace is not None:
        return (kind, namespace, name)
    found = sorted(
        {
            k
            for k in [*state.resources, *state.statuses, *state.broken]
            if k[0] == kind and k[2] == name
        }
    )
    if not found:
        fail(f"{kind} {name!r} not found")
    if len(found) > 1:
        spaces = ", ".join(k[1] for k in found)
        fail(f"{kind} {name!r} is in several namespaces ({spaces}); choose one with -n")
    return found[0]


def _settled(state: State, change: Change) -> bool:
    """The control plane has read this change."""
    if change.expected is None:
        return not state.known(change.key)
    if state.resources.get(change.key) == change.expected:
        return True
    return change.key in state.broken and change.key not in state.resources


# --- reporting --------------------------------------------------------------------------


def _report(
    install: Install, before: State, changes: list[Change], wait: bool, timeout: float
) -> None:
    if not wait:
        for change in changes:
            typer.echo(f"{_name(change.key)} {change.verb}")
        return
    deadline = time.monotonic() + timeout
    after = _state(install)
    while not all(_settled(after, c) for c in changes) and time.monotonic() < deadline:
        time.sleep(0.05)
        after = _state(install)
    failed = False
    for change in changes:
        if not _settled(after, change):
            typer.echo(f"{_name(change.key)} {change.verb}: not read by the control plane yet")
            failed = True
            continue
        line, rejected = _status_line(after, change.key)
        typer.echo(f"{_name(change.key)} {change.verb}{line}")
        failed |= rejected
    moved = [
        key
        for key in sorted(set(before.statuses) | set(after.statuses))
        if key not in {c.key for c in changes}
        and key in after.statuses
        and _summary(before.statuses.get(key)) != _summary(after.statuses.get(key))
    ]
    if moved:
        typer.echo("Statuses that changed with it:")
        for key in moved:
            line, _ = _status_line(after, key)
            typer.echo(f"  {_name(key)}{line}")
    if failed:
        raise typer.Exit(1)


def _status_line(state: State, key: Key) -> tuple[str, bool]:
    """`: Rejected` and indented findings; whether the resource is Rejected."""
    status = state.statuses.get(key)
    if status is None:
        broken = state.broken.get(key)
        return (f": Rejected\n    {broken}", True) if broken else ("", False)
    lines = [f": {status['state']}", *(f"    {f}" for f in findings(status))]
    lines += [f"    {m}" for m in status.get("messages") or []]
    return "\n".join(lines), status["state"] == "Rejected"


def _summary(status: dict[str, Any] | None) -> tuple[str, str] | None:
    return None if status is None else (status["state"], status.get("reason", ""))


def _name(key: Key) -> str:
    return f"{key[0]} {key[1]}.{key[2]}"
