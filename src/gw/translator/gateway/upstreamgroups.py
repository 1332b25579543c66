"""UpstreamGroups: weighted destinations that routes name with `routeAction.upstreamGroup`.

A group is checked on its own (its status: a destination that names no upstream, or an
upstream that does not exist, rejects it, as in the established gateway); a route to it
forwards to its destinations by weight. A route to a group that does not exist only warns
and answers 503, like a route to a missing upstream.
"""

from __future__ import annotations

import dataclasses

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.virtualservice import MAX_TOTAL_WEIGHT
from gw.translator import ir
from gw.translator.gateway.destinations import destination_upstream, refine_destination
from gw.translator.gateway.headers import HeaderSecrets
from gw.translator.gateway.orch import resolve_service_destination
from gw.translator.gateway.traffic import build_destination_traffic
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport


def check_upstream_groups(refs: Refs, reports: Reports) -> None:
    for group in refs.of_kind(api.UpstreamGroup):
        group_clusters(group, refs, reports.of(group.key))


def route_to_group(
    ref: ResourceRef, *, owner: ResourceKey, refs: Refs, report: ResourceReport, field: str
) -> tuple[ir.WeightedCluster, ...] | None:
    """A route's clusters for the group: () when it does not exist (warned; the route
    answers 503); None when it is invalid (it is rejected, and so is the route's resource,
    through the reference)."""
    group = refs.resolve(api.UpstreamGroup, ref, referrer=owner, field=field)
    key = refs.key(api.UpstreamGroup, ref, owner)
    if group is None:
        if not refs.exists(key):
            report.warning(
                field,
                f"Route Warning: InvalidDestinationWarning. Reason: *v1.UpstreamGroup "
                f"{{ {key.namespace}.{key.name} }} not found",
            )
        return ()
    return group_clusters(group, refs, ResourceReport())


def group_clusters(
    group: api.UpstreamGroup, refs: Refs, report: ResourceReport
) -> tuple[ir.WeightedCluster, ...] | None:
    """The group's clusters with weight above 0, or None after reporting an error."""
    destinations = group.spec.destinations
    if not destinations:
        report.error(
            "spec.destinations",
            "must specify at least one weighted destination for an upstream group",
        )
        return None
    out: list[ir.WeightedCluster] = []
    ok = True
    for i, weighted in enumerate(destinations):
        errors = len(report.errors)
        traffic = build_destination_traffic(
            weighted.options,
            f"spec.destinations[{i}].options",
            report,
            HeaderSecrets(refs, group.key),
        )
        target = _destination(group, i, weighted.destination, refs, report)
        if target is None or len(report.errors) > errors:
            ok = False
        elif weighted.weight > 0:
            out.append(dataclasses.replace(target, weight=weighted.weight, traffic=traffic))
    if ok and not out:
        report.error("spec.destinations", "at least one destination needs a weight above 0")
    if ok and (total := sum(w.weight for w in destinations)) > MAX_TOTAL_WEIGHT:
        report.error("spec.destinations", weights_too_large(total))
        ok = False
    if ok and len(out) > 1 and any(t.path_rewrite for t in out):
        report.error(
            "spec.destinations",
            "an azure function (destinationSpec.azure) can only be a route's one destination "
            "in gw: Envoy rewrites the path per route, not per weighted destination",
        )
        ok = False
    return tuple(out) if ok and out else None


def weights_too_large(total: int) -> str:
    """Found by the reliability suite's property tests: Envoy refuses such a split."""
    return f"the weights add up to {total}; their sum must not exceed {MAX_TOTAL_WEIGHT}"


def _destination(
    group: api.UpstreamGroup,
    index: int,
    dest: api.virtualservice.Destination,
    refs: Refs,
    report: ResourceReport,
) -> ir.WeightedCluster | None:
    field = f"spec.destinations[{index}].destination"
    number = f"destination # {index + 1}"
    if dest.upstream is None and dest.orch is None:
        report.error(field, f"{number}: destination is nil")
        return None
    if dest.upstream is not None and dest.orch is not None:
        report.error(field, f"{number}: a destination needs exactly one of upstream or orch")
        return None
    if dest.orch is not None:
        target = resolve_service_destination(
            dest.orch, refs=refs, referrer=group.key, field=f"{field}.orch", report=report
        )
        return refine_destination(target, None, dest, refs=refs, field=field, report=report)
    assert dest.upstream is not None
    key = refs.key(api.Upstream, dest.upstream, group.key)
    there, found = destination_upstream(
        refs, dest.upstream, referrer=group.key, field=f"{field}.upstream"
    )
    if not there and not refs.exists(key):
        report.error(
            f"{field}.upstream",
            f"{number}: upstream not found: list did not find upstream {key.namespace}.{key.name}",
        )
        return None
    target = ir.WeightedCluster(cluster=cluster_name(key.name, key.namespace))
    return refine_destination(target, found, dest, refs=refs, field=field, report=report)
