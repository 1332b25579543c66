"""`gwctl get gateways|proxy [NAME]`: Gateways with their listener and selection, and the
Proxies the control plane built (REFERENCE.md §7.3), as tables or manifests (`-o yaml|json`).

Proxies are not stored: they are the control plane's translation result, read from its
admin API (`/snapshots/proxy-resources`) with their own statuses. The commands join the
`gwctl get` group (`get.app`).
"""

from __future__ import annotations

from typing import Any

from gw.cli.command import fail
from gw.cli.get import register, state_text
from gw.cli.install import Install, InstallError
from gw.cli.tables import render_table

__all__ = ["gateway_table", "proxy_table"]


def gateway_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        http = spec.get("httpGateway")
        selection = _selection_text(http) if http is not None else _other_text(spec)
        rows.append(
            [
                r["metadata"]["name"],
                f"{spec.get('bindAddress', '::')}:{spec.get('bindPort', 8080)}",
                "true" if spec.get("ssl") else "false",
                "\n".join(spec.get("proxyNames") or ["gateway-proxy"]),
                selection,
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


def _other_text(spec: dict[str, Any]) -> str:
    """What a TCP or hybrid gateway serves, in a few words."""
    if (tcp := spec.get("tcpGateway")) is not None:
        hosts = tcp.get("tcpHosts") or []
        return f"tcp: {len(hosts)} host{'s' if len(hosts) != 1 else ''}"
    hybrid = spec.get("hybridGateway") or {}
    if hybrid.get("matchedGateways") is not None:
        return f"hybrid: {len(hybrid['matchedGateways'])} matched"
    delegated = [k for k in ("delegatedHttpGateways", "delegatedTcpGateways") if k in hybrid]
    return f"hybrid: {', '.join(delegated)}" if delegated else ""


def _virtual_hosts(listener: dict[str, Any]) -> list[dict[str, Any]]:
    """The virtual hosts of a listener, or of each HTTP part of a hybrid one."""
    parts = (listener.get("hybridListener") or {}).get("matchedListeners") or [listener]
    return [v for part in parts for v in (part.get("httpListener") or {}).get("virtualHosts", [])]


def proxies_of(
    install: Install, kind: str, name: str | None, namespace: str | None
) -> list[dict[str, Any]]:
    """The Proxy resources the control plane built (they are not stored)."""
    try:
        proxies = install.admin("/snapshots/proxy-resources")
    except InstallError as exc:
        fail(str(exc))
    found = [
        p
        for p in proxies
        if (not name or p["metadata"]["name"] == name)
        and (not namespace or p["metadata"]["namespace"] == namespace)
    ]
    if name and not found:
        fail(f"{kind} {name!r} not found")
    return found


def proxy_table(proxies: list[dict[str, Any]]) -> str:
    rows = []
    for p in proxies:
        listeners = p["spec"]["listeners"]
        vhosts = sorted({v["name"] for lis in listeners for v in _virtual_hosts(lis)})
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
    return render_table([*headers, "Status"], rows)


register(
    "Proxy",
    ("proxy", "proxies", "px"),
    "List the proxies the control plane built, with listeners, virtual hosts and status.",
    proxy_table,
    fetch=proxies_of,
)
