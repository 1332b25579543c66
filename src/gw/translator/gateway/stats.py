"""`stats.virtualClusters` on a virtual host → `ir.VirtualCluster`s: a name (dots become
underscores, which Envoy's stat names reserve), a path regex (RE2, whole path) and an
optional method, checked as the established gateway checks them."""

from __future__ import annotations

from gw.api.stats import Stats
from gw.translator import ir
from gw.translator.gateway.matching import regex
from gw.translator.reports import ResourceReport

#: Envoy's request methods (`envoy.config.core.v3.RequestMethod`).
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")


def build_virtual_clusters(
    stats: Stats | None, field: str, report: ResourceReport
) -> tuple[ir.VirtualCluster, ...]:
    if stats is None:
        return ()
    out = []
    for i, cluster in enumerate(stats.virtual_clusters):
        where = f"{field}.virtualClusters[{i}]"
        failed = f"failed to process virtual cluster [{cluster.name}]"
        if not cluster.name:
            report.error(f"{where}.name", f"{failed}: name is required")
            continue
        if not cluster.pattern:
            report.error(f"{where}.pattern", f"{failed}: pattern is required")
            continue
        method = cluster.method.upper()
        if method and method not in METHODS:
            report.error(
                f"{where}.method",
                f"{failed}: invalid method name [{cluster.method}]. Allowed values: "
                + ", ".join(METHODS),
            )
            continue
        if regex(cluster.pattern, f"{where}.pattern", report) < 0:
            continue
        out.append(
            ir.VirtualCluster(
                name=cluster.name.replace(".", "_"), pattern=cluster.pattern, method=method or None
            )
        )
    return tuple(out)
