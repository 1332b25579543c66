"""`gwctl get upstreams|upstreamgroups|virtualservice|routetables|ratelimitconfig [NAME]`:
resources with their status, as the established tool's tables (REFERENCE.md §7.3) or as
manifests (`-o yaml|json`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, Output, OutputOpt, connect, emit, fail
from gw.cli.install import CONTROLLER_NAMESPACE, Install, InstallError
from gw.cli.tables import render_table

app = typer.Typer(help="List resources with their status.", no_args_is_help=True)


def resources_of(
    install: Install, kind: str, name: str | None, *, missing_ok: bool = False
) -> list[dict[str, Any]]:
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
    if name and not out and not missing_ok:
        fail(f"{kind} {name!r} not found")
    return out


@app.command("upstreams")
@app.command("upstream", hidden=True)
@app.command("us", hidden=True)
def get_upstreams(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List upstreams with type, status and details."""
    resources = resources_of(connect(admin_url), "Upstream", name)
    emit(resources, output, upstream_table(resources))


def upstream_table(resources: list[dict[str, Any]]) -> str:
    rows = [
        [r["metadata"]["name"], upstream_type(r), state_text(r), upstream_details(r)]
        for r in resources
    ]
    return render_table(["Upstream", "Type", "Status", "Details"], rows)


@app.command("virtualservice")
@app.command("virtualservices", hidden=True)
@app.command("vs", hidden=True)
def get_virtualservice(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List virtual services with domains, SSL, status and routes."""
    resources = resources_of(connect(admin_url), "VirtualService", name)
    emit(resources, output, virtualservice_table(resources))


def virtualservice_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        vhost = spec.get("virtualHost") or {}
        rows.append(
            [
                r["metadata"]["name"],
                spec.get("displayName", ""),
                ", ".join(vhost.get("domains") or ["*"]),
                ssl_kind(spec),
                state_text(r),
                "",
                "\n".join(
                    route_line(route, r["metadata"].get("namespace", "default"))
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
    return render_table(headers, rows)


@app.command("routetable")
@app.command("routetables", hidden=True)
@app.command("rt", hidden=True)
def get_routetables(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List route tables with their routes and status."""
    resources = resources_of(connect(admin_url), "RouteTable", name)
    emit(resources, output, routetable_table(resources))


def routetable_table(resources: list[dict[str, Any]]) -> str:
    rows = [
        [
            r["metadata"]["name"],
            "\n".join(
                route_line(route, r["metadata"].get("namespace", "default"))
                for route in r.get("spec", {}).get("routes", [])
            ),
            state_text(r),
        ]
        for r in resources
    ]
    return render_table(["Route Table", "Routes", "Status"], rows)


@app.command("upstreamgroup")
@app.command("upstreamgroups", hidden=True)
@app.command("ug", hidden=True)
def get_upstreamgroups(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List upstream groups with status, total weight and destinations."""
    resources = resources_of(connect(admin_url), "UpstreamGroup", name)
    emit(resources, output, upstreamgroup_table(resources))


def upstreamgroup_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        namespace = r["metadata"].get("namespace", "default")
        dests = r.get("spec", {}).get("destinations", [])
        details = []
        for d in dests:
            single = {"routeAction": {"single": d.get("destination", {})}}
            details.append(f"{destination(single, namespace)}: weight {d.get('weight', 0)}")
        total = sum(int(d.get("weight", 0)) for d in dests)
        rows.append([r["metadata"]["name"], state_text(r), str(total), "\n".join(details)])
    return render_table(["Upstream Group", "Status", "Total Weight", "Details"], rows)


@app.command("ratelimitconfig")
@app.command("ratelimitconfigs", hidden=True)
@app.command("rlc", hidden=True)
def get_ratelimitconfig(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List rate limit configs with status and their top-level descriptors."""
    resources = resources_of(connect(admin_url), "RateLimitConfig", name)
    emit(resources, output, ratelimitconfig_table(resources))


def ratelimitconfig_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        raw = r.get("spec", {}).get("raw") or {}
        descriptors = [
            d.get("key", "") + (f"={d['value']}" if "value" in d else "")
            for d in raw.get("descriptors") or []
        ]
        rows.append([r["metadata"]["name"], state_text(r), "\n".join(descriptors)])
    return render_table(["Rate Limit Config", "Status", "Descriptors"], rows)


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


def ssl_kind(spec: dict[str, Any]) -> str:
    ssl = spec.get("sslConfig")
    if not ssl:
        return "none"
    if "secretRef" in ssl:
        return "secret_ref"
    if "sslFiles" in ssl:
        return "ssl_files"
    return "sds"


def route_line(route: dict[str, Any], namespace: str) -> str:
    matchers = route.get("matchers") or [{"prefix": "/"}]
    match = ",".join(m.get("prefix") or m.get("exact") or m.get("regex") or "?" for m in matchers)
    name = f"{route['name']}: " if route.get("name") else ""
    return f"{name}{match} -> {destination(route, namespace)}"


def destination(route: dict[str, Any], namespace: str) -> str:
    if "directResponseAction" in route:
        return str(route["directResponseAction"].get("status"))
    if "redirectAction" in route:
        return str(route["redirectAction"].get("hostRedirect", "redirect"))
    if "delegateAction" in route:
        ref = route["delegateAction"].get("ref")
        if ref:
            return f"{ref.get('namespace') or namespace}.{ref['name']} (route table)"
        return "route tables by selector"
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
