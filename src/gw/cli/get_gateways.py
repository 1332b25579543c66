"""`gwctl get gateways|proxy [NAME]`: Gateways with their listener and selection, and the
Proxies the control plane built (REFERENCE.md §7.3), as tables or manifests (`-o yaml|json`).

Proxies are not stored: they are the control plane's translation result, read from its
admin API (`/snapshots/proxy-resources`) with their own statuses. The commands join the
`gwctl get` group (`get.app`).
"""

from __future__ import annotations

from typing import Any

from gw.cli.command import AdminUrl, Output, OutputOpt, connect, emit, fail
from gw.cli.get import AllNamespaces, NameArg, NamespaceOpt, app, register, state_text
from gw.cli.install import InstallError
from gw.cli.tables import render_table

__all__ = ["gateway_table", "get_proxy"]


def gateway_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        http = spec.get("httpGateway")
        rows.append(
            [
                r["metadata"]["name"],
                f"{spec.get('bindAddress', '::')}:{spec.get('bindPort', 8080)}",
                "true" if spec.get("ssl") else "false",
                "\n".join(spec.get("proxyNames") or ["gateway-proxy"]),
                _selection_text(http) if http is not None else "",
                state_text(r),
            ]
        )
    return render_table(["Gateway", "Listener", "SSL", "Proxies", "Selection", "Status"], rows)


register(
    "Gateway",
    ("gateways", "gateway", "gw"),
    "List gateways with their listener, proxies and status.",
    gateway_table,
)


def _selection_text(http: dict[str, Any]) -> str:
    expressions = (http.get("virtualServiceExpressions") or {}).get("expressions")
    if expressions:
        return "\n".join(
            f"{e['key']} {e.get('operator', 'Equals')} {','.join(e.get('values', []))}".strip()
            for e in expressions
        )
    if http.get("virtualServiceSelector"):
        return ",".join(f"{k}={v}" for k, v in sorted(http["virtualServiceSelector"].items()))
    if http.get("virtualServices"):
        return "\n".join(
            f"{ref.get('namespace', '')}.{ref['name']}".lstrip(".")
            for ref in http["virtualServices"]
        )
    namespaces = http.get("virtualServiceNamespaces") or ["*"]
    return "all in " + ",".join(namespaces)


@app.command("proxy")
@app.command("proxies", hidden=True)
@app.command("px", hidden=True)
def get_proxy(
    name: NameArg = None,
    output: OutputOpt = Output.table,
    namespace: NamespaceOpt = None,
    all_namespaces: AllNamespaces = False,
    admin_url: AdminUrl = None,
) -> None:
    """List the proxies the control plane built, with listeners, virtual hosts and status."""
    try:
        proxies = connect(admin_url).admin("/snapshots/proxy-resources")
    except InstallError as exc:
        fail(str(exc))
    wanted = None if all_namespaces else namespace
    proxies = [
        p
        for p in proxies
        if (not name or p["metadata"]["name"] == name)
        and (not wanted or p["metadata"]["namespace"] == wanted)
    ]
    if name and not proxies:
        fail(f"Proxy {name!r} not found")
    rows = []
    for p in proxies:
        listeners = p["spec"]["listeners"]
        vhosts = sorted(
            {v["name"] for lis in listeners for v in lis["httpListener"]["virtualHosts"]}
        )
        rows.append(
            [
                p["metadata"]["name"],
                p["metadata"]["namespace"],
                "gw",
                "\n".join(f"{lis['bindAddress']}:{lis['bindPort']}" for lis in listeners),
                "\n".join(vhosts),
                state_text(p),
            ]
        )
    headers = ["Proxy Name", "Proxy Namespace", "Created By", "Listeners", "Virtual Hosts"]
    emit(proxies, output, render_table([*headers, "Status"], rows))
