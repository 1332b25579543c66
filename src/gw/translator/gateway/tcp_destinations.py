"""Where a TCP host's connections go: one upstream or service (`single`), several by weight
(`multi`), an UpstreamGroup, or the cluster the client's SNI names
(`forwardSniClusterName`).

Upstreams and groups that do not exist only warn (`TcpHost Warning:
InvalidDestinationWarning`, as a route's do), and the host closes its connections until
they exist. Services addressed directly get their cluster from the gateway (`clusters` of
the context), as a route's do from its VirtualService.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.tcp import TcpAction
from gw.api.virtualservice import MAX_TOTAL_WEIGHT, Destination, MultiDestination
from gw.translator import ir
from gw.translator.envoy.names import reserved_cluster_problem
from gw.translator.gateway.orch import resolve_service_destination, service_cluster
from gw.translator.gateway.upstreamgroups import group_clusters, weights_too_large
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.reports import ResourceReport

if TYPE_CHECKING:
    from gw.translator.gateway.tcp import TcpContext


def tcp_destination(
    action: TcpAction, field: str, context: TcpContext
) -> tuple[ir.WeightedCluster, ...] | None:
    """The host's clusters (() for `forwardSniClusterName` or a missing group), or None
    after reporting errors."""
    kinds = [
        k
        for k in ("single", "multi", "upstream_group", "forward_sni_cluster_name")
        if getattr(action, k) is not None
    ]
    if len(kinds) != 1:
        context.report.error(
            field,
            "a tcp host destination needs exactly one of single, multi, upstreamGroup or "
            "forwardSniClusterName",
        )
        return None
    if action.single is not None:
        target = _single(action.single, f"{field}.single", context)
        return None if target is None else (target,)
    if action.multi is not None:
        return _multi(action.multi, f"{field}.multi", context)
    if action.upstream_group is not None:
        return _group(action.upstream_group, f"{field}.upstreamGroup", context)
    return ()


def _single(dest: Destination, field: str, context: TcpContext) -> ir.WeightedCluster | None:
    report, refs, owner = context.report, context.refs, context.owner
    if (dest.upstream is None) == (dest.orch is None):
        report.error(field, "a destination needs exactly one of upstream or orch")
        return None
    if dest.orch is not None:
        target = resolve_service_destination(
            dest.orch, refs=refs, referrer=owner, field=f"{field}.orch", report=report
        )
        if target is not None and target.service is not None:
            context.clusters[target.cluster] = service_cluster(target.cluster, target.service)
            target = dataclasses.replace(target, service=None)
        return target
    assert dest.upstream is not None
    key = refs.key(api.Upstream, dest.upstream, owner)
    found = refs.resolve(api.Upstream, dest.upstream, referrer=owner, field=f"{field}.upstream")
    cluster = cluster_name(key.name, key.namespace)
    if (reserved := reserved_cluster_problem(cluster)) is not None:
        report.error(f"{field}.upstream", reserved)
        return None
    if found is None and not refs.exists(key):
        report.warning(f"{field}.upstream", _not_found("Upstream", key))
    return ir.WeightedCluster(cluster=cluster)


def _multi(
    multi: MultiDestination, field: str, context: TcpContext
) -> tuple[ir.WeightedCluster, ...] | None:
    report = context.report
    dests = multi.destinations
    if not any(d.weight > 0 for d in dests):
        report.error(f"{field}.destinations", "at least one destination needs a weight above 0")
        return None
    if (total := sum(d.weight for d in dests)) > MAX_TOTAL_WEIGHT:
        report.error(f"{field}.destinations", weights_too_large(total))
        return None
    out = []
    for i, d in enumerate(dests):
        where = f"{field}.destinations[{i}]"
        if d.options is not None:
            report.error(
                f"{where}.options",
                "destination options (transformations) act on HTTP requests; a tcp host "
                "proxies bytes: remove them",
            )
        target = _single(d.destination, f"{where}.destination", context)
        if target is not None and d.weight > 0:
            out.append(dataclasses.replace(target, weight=d.weight))
    return tuple(out) if len(out) == sum(1 for d in dests if d.weight > 0) else None


def _group(
    ref: ResourceRef, field: str, context: TcpContext
) -> tuple[ir.WeightedCluster, ...] | None:
    refs, owner = context.refs, context.owner
    group = refs.resolve(api.UpstreamGroup, ref, referrer=owner, field=field)
    if group is None:
        key = refs.key(api.UpstreamGroup, ref, owner)
        if not refs.exists(key):
            context.report.warning(field, _not_found("UpstreamGroup", key))
        return ()
    # The group's own faults are on its status (and reject this gateway through the ref).
    found = group_clusters(group, refs, ResourceReport())
    if found is None:
        return ()
    for target in found:
        if target.service is not None:
            context.clusters[target.cluster] = service_cluster(target.cluster, target.service)
    return tuple(dataclasses.replace(t, service=None) for t in found)


def _not_found(kind: str, key: ResourceKey) -> str:
    return (
        f"TcpHost Warning: InvalidDestinationWarning. Reason: *v1.{kind} "
        f"{{ {key.namespace}.{key.name} }} not found"
    )
