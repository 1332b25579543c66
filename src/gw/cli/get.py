"""`gwctl get KIND [NAME]`: every resource of a kind in the install, with its status, as the
established tool's tables (REFERENCE.md §7.3) or as manifests (`-o yaml|json`).

Nothing is hidden: a resource whose manifest the store could not accept (an unknown field, a
bad value) is listed Rejected with the reason even when no version of it was ever accepted,
and a file that cannot be parsed at all (so no resource can be told from it) is named on
stderr. Every namespace is listed unless `-n NAMESPACE` narrows it (`-A` says "all" outright).

Each kind's command is made by `register()`; the tables live next to it (this module:
upstreams; `get_routes`, `get_gateways`, `get_options`, `get_more`: the others).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, Output, OutputOpt, connect, emit, fail, warn
from gw.cli.install import CONTROLLER_NAMESPACE, Install, InstallError
from gw.cli.tables import render_table

app = typer.Typer(help="List resources with their status.", no_args_is_help=True)

Table = Callable[[list[dict[str, Any]]], str]
NameArg = Annotated[str | None, typer.Argument(help="Only the resource of this name.")]
NamespaceOpt = Annotated[
    str | None,
    typer.Option("-n", "--namespace", help="Only this namespace (default: every namespace)."),
]
AllNamespaces = Annotated[
    bool, typer.Option("-A", "--all-namespaces", help="Every namespace (overrides -n).")
]


#: How a kind's resources are read: (install, kind, name, namespace) → manifests.
Fetch = Callable[[Install, str, str | None, str | None], list[dict[str, Any]]]


def register(
    kind: str, names: Sequence[str], help: str, table: Table, fetch: Fetch | None = None
) -> None:
    """Add `gwctl get <names[0]>` (the other names are hidden aliases) for `kind`; its
    resources come from the store (`resources_of`) unless `fetch` reads them elsewhere."""

    def command(
        name: NameArg = None,
        output: OutputOpt = Output.table,
        namespace: NamespaceOpt = None,
        all_namespaces: AllNamespaces = False,
        admin_url: AdminUrl = None,
    ) -> None:
        install = connect(admin_url)
        wanted = None if all_namespaces else namespace
        if fetch is None:
            resources = resources_of(install, kind, name, namespace=wanted, report_unreadable=True)
        else:
            resources = fetch(install, kind, name, wanted)
        emit(resources, output, table(resources))

    command.__doc__ = help
    first, *aliases = names
    app.command(first, help=help)(command)
    for alias in aliases:
        app.command(alias, help=help, hidden=True)(command)


def resources_of(
    install: Install,
    kind: str,
    name: str | None,
    *,
    missing_ok: bool = False,
    namespace: str | None = None,
    report_unreadable: bool = False,
) -> list[dict[str, Any]]:
    """Resources of a kind as manifests, each with its status under `status.statuses`,
    sorted by namespace and name. A resource the store could not accept at all is a stub
    (kind, name, namespace, status) so that it is listed with its reason."""
    try:
        resources = install.admin("/snapshots/input")
        statuses = install.admin("/statuses")
    except InstallError as exc:
        fail(str(exc))
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for resource in resources:
        meta = resource["metadata"]
        if resource["kind"] == kind:
            found[(meta.get("namespace", "default"), meta["name"])] = resource
    status_of = {
        (s["namespace"], s["name"]): s["status"] for s in statuses["resources"] if s["kind"] == kind
    }
    for key in status_of:
        found.setdefault(key, _stub(kind, *key))
    for error in statuses["inputErrors"]:
        key = error.get("resource")
        if key and key["kind"] == kind:
            where = (key["namespace"], key["name"])
            found.setdefault(where, _stub(kind, *where))
            if where not in status_of and _statusless(kind):
                # The orchestrator's own kinds (secrets) have no status: the error is it.
                status_of[where] = _unreadable_status(error)
    out = []
    for where, resource in sorted(found.items()):
        if (name and where[1] != name) or (namespace and where[0] != namespace):
            continue
        status = status_of.get(where)
        if status is not None:
            resource = {**resource, "status": {"statuses": {CONTROLLER_NAMESPACE: status}}}
        out.append(resource)
    if report_unreadable:
        _warn_unreadable(statuses["inputErrors"])
    if name and not out and not missing_ok:
        fail(f"{kind} {name!r} not found" + (f" in namespace {namespace}" if namespace else ""))
    return out


def _statusless(kind: str) -> bool:
    from gw.api import STATUSLESS_KINDS  # the models load only on this rare path

    return kind in STATUSLESS_KINDS


def _stub(kind: str, namespace: str, name: str) -> dict[str, Any]:
    """A resource the store holds no accepted version of: what its status is about."""
    from gw.api import kind_for

    model = kind_for(kind)
    return {
        "apiVersion": model.API_VERSION if model else "",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
    }


def _unreadable_status(error: dict[str, Any]) -> dict[str, Any]:
    where = f"{error['source']}: " if error.get("source") else ""
    return {"state": "Rejected", "reason": f"{where}{error['message']}", "reportedBy": "gw"}


def _warn_unreadable(errors: list[dict[str, Any]]) -> None:
    """Files no resource can be told from: whatever they hold is not listed."""
    unkeyed = [e for e in errors if not e.get("resource")]
    if not unkeyed:
        return
    noun = "manifest" if len(unkeyed) == 1 else "manifests"
    lines = [f"Warning: {len(unkeyed)} {noun} could not be read; what they hold is not listed:"]
    lines += [f"  {e['source'] or '?'}: {e['message']}" for e in unkeyed]
    warn("\n".join(lines))


def upstream_table(resources: list[dict[str, Any]]) -> str:
    rows = [
        [r["metadata"]["name"], upstream_type(r), state_text(r), upstream_details(r)]
        for r in resources
    ]
    return render_table(["Upstream", "Type", "Status", "Details"], rows)


register(
    "Upstream",
    ("upstreams", "upstream", "us"),
    "List upstreams with type, status and details.",
    upstream_table,
)


def state_text(resource: dict[str, Any]) -> str:
    """The state, then one line per finding for a resource that is not Accepted."""
    status = resource.get("status", {}).get("statuses", {}).get(CONTROLLER_NAMESPACE)
    if status is None:
        return "Pending"
    return "\n".join([status["state"], *findings(status)])


def findings(status: dict[str, Any]) -> list[str]:
    """The findings of a status's reason, one per line, without the multi-error framing."""
    if status["state"] == "Accepted":
        return []
    lines = []
    for line in status.get("reason", "").splitlines():
        line = line.strip()
        if line and not line.endswith(("occurred:", "warning:")):
            lines.append(line.removeprefix("* "))
    return lines


def upstream_type(resource: dict[str, Any]) -> str:
    spec = resource.get("spec", {})
    if "orch" in spec:
        return "Orch"
    if "static" in spec:
        return "Static"
    return "Unknown"


def upstream_details(resource: dict[str, Any]) -> str:
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
