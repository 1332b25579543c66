"""`gwctl get matchablehttpgateway|matchabletcpgateway|httplisteneroption [NAME]`: the parts
of hybrid gateways kept in resources of their own, and the listener options attached to
Gateways, with their status, as tables or manifests (`-o yaml|json`). The established tool
has no tables for them; the columns follow `gwctl get gateways`. The commands join the
`gwctl get` group (`get.app`).
"""

from __future__ import annotations

from typing import Any

from gw.cli.get import register, state_text
from gw.cli.tables import render_table

__all__ = ["http_listener_option_table", "matchable_table", "matcher_text"]


def matchable_table(title: str, resources: list[dict[str, Any]]) -> str:
    rows = [
        [
            r["metadata"]["name"],
            r["metadata"].get("namespace", "default"),
            matcher_text(r.get("spec", {}).get("matcher") or {}),
            state_text(r),
        ]
        for r in resources
    ]
    return render_table([title, "Namespace", "Matcher", "Status"], rows)


def matcher_text(matcher: dict[str, Any]) -> str:
    """`127.0.0.2/32`, `sni a.test`, `tls`; `any` for an empty matcher."""
    lines = [
        f"{r.get('addressPrefix', '')}/{r.get('prefixLen', 0)}"
        for r in matcher.get("sourcePrefixRanges") or []
    ]
    ssl = matcher.get("sslConfig")
    if ssl is not None:
        names = ssl.get("sniDomains") or []
        lines.append(f"sni {','.join(names)}" if names else "tls")
    return "\n".join(lines) or "any"


def http_listener_option_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        targets = [
            t["name"] + (f" ({t['sectionName']})" if t.get("sectionName") else "")
            for t in spec.get("targetRefs") or []
        ]
        options = sorted((spec.get("options") or {}).keys())
        rows.append([r["metadata"]["name"], "\n".join(targets), "\n".join(options), state_text(r)])
    return render_table(["Http Listener Option", "Targets", "Options", "Status"], rows)


register(
    "MatchableHttpGateway",
    ("matchablehttpgateway", "matchablehttpgateways", "hgw"),
    "List MatchableHttpGateways with their matcher and status.",
    lambda resources: matchable_table("Matchable Http Gateway", resources),
)
register(
    "MatchableTcpGateway",
    ("matchabletcpgateway", "matchabletcpgateways", "tgw"),
    "List MatchableTcpGateways with their matcher and status.",
    lambda resources: matchable_table("Matchable Tcp Gateway", resources),
)
register(
    "HttpListenerOption",
    ("httplisteneroption", "httplisteneroptions", "hlisopts"),
    "List HttpListenerOptions with the gateways they target, their options and status.",
    http_listener_option_table,
)
