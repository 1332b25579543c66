"""`gwctl get virtualservice|routetable|upstreamgroup [NAME]`: what routes requests, as the
established tool's tables (REFERENCE.md §7.3): domains, SSL and routes of virtual services,
the routes of route tables, and the weighted destinations of upstream groups. The commands
join the `gwctl get` group (`get.app`)."""

from __future__ import annotations

from typing import Any

from gw.cli.get import register, state_text
from gw.cli.tables import render_table

__all__ = ["destination", "route_line", "virtualservice_table"]


def virtualservice_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        vhost = spec.get("virtualHost") or {}
        rows.append(
            [
                r["metadata"]["name"],
                spec.get("displayName", ""),
                # A resource never accepted (no spec) serves no domain at all.
                ", ".join(vhost.get("domains") or (["*"] if "spec" in r else [])),
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


register(
    "VirtualService",
    ("virtualservice", "virtualservices", "vs"),
    "List virtual services with domains, SSL, status and routes.",
    virtualservice_table,
)
register(
    "RouteTable",
    ("routetable", "routetables", "rt"),
    "List route tables with their routes and status.",
    routetable_table,
)
register(
    "UpstreamGroup",
    ("upstreamgroup", "upstreamgroups", "ug"),
    "List upstream groups with status, total weight and destinations.",
    upstreamgroup_table,
)
