"""`gwctl get matchablehttpgateway|matchabletcpgateway|httplisteneroption [NAME]`: the parts
of hybrid gateways kept in resources of their own, and the listener options attached to
Gateways, with their status, as tables or manifests (`-o yaml|json`). The established tool
has no tables for them; the columns follow `gwctl get gateways`. The commands join the
`gwctl get` group (`get.app`).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from gw.cli.command import AdminUrl, Output, OutputOpt, connect, emit
from gw.cli.get import app, resources_of, state_text
from gw.cli.tables import render_table

__all__ = ["get_http_listener_options", "get_matchable_gateways", "matcher_text"]


@app.command("matchablehttpgateway")
@app.command("matchablehttpgateways", hidden=True)
@app.command("hgw", hidden=True)
def get_matchable_http_gateways(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List MatchableHttpGateways with their matcher and status."""
    get_matchable_gateways("MatchableHttpGateway", name, output, admin_url)


@app.command("matchabletcpgateway")
@app.command("matchabletcpgateways", hidden=True)
@app.command("tgw", hidden=True)
def get_matchable_tcp_gateways(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List MatchableTcpGateways with their matcher and status."""
    get_matchable_gateways("MatchableTcpGateway", name, output, admin_url)


def get_matchable_gateways(
    kind: str, name: str | None, output: Output, admin_url: str | None
) -> None:
    resources = resources_of(connect(admin_url), kind, name)
    rows = [
        [
            r["metadata"]["name"],
            r["metadata"].get("namespace", "default"),
            matcher_text(r.get("spec", {}).get("matcher") or {}),
            state_text(r),
        ]
        for r in resources
    ]
    title = "Matchable Http Gateway" if kind == "MatchableHttpGateway" else "Matchable Tcp Gateway"
    emit(resources, output, render_table([title, "Namespace", "Matcher", "Status"], rows))


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


@app.command("httplisteneroption")
@app.command("httplisteneroptions", hidden=True)
@app.command("hlisopts", hidden=True)
def get_http_listener_options(
    name: Annotated[str | None, typer.Argument()] = None,
    output: OutputOpt = Output.table,
    admin_url: AdminUrl = None,
) -> None:
    """List HttpListenerOptions with the gateways they target, their options and status."""
    resources = resources_of(connect(admin_url), "HttpListenerOption", name)
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        targets = [
            t["name"] + (f" ({t['sectionName']})" if t.get("sectionName") else "")
            for t in spec.get("targetRefs") or []
        ]
        options = sorted((spec.get("options") or {}).keys())
        rows.append([r["metadata"]["name"], "\n".join(targets), "\n".join(options), state_text(r)])
    headers = ["Http Listener Option", "Targets", "Options", "Status"]
    emit(resources, output, render_table(headers, rows))
