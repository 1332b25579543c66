"""What a destination adds to its cluster: the `subset` of the upstream's endpoints it
picks and, for an `aws` upstream, the Lambda function `destinationSpec.aws` invokes. Shared
by routes and UpstreamGroups, whose destinations have the same shape."""

from __future__ import annotations

from dataclasses import replace

from gw import api
from gw.api.virtualservice import Destination
from gw.translator import ir
from gw.translator.gateway.aws import resolve_lambda
from gw.translator.gateway.subsets import route_subset
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def refine_destination(
    target: ir.WeightedCluster | None,
    upstream: api.Upstream | None,
    dest: Destination,
    *,
    refs: Refs,
    field: str,
    report: ResourceReport,
) -> ir.WeightedCluster | None:
    """`target` with its subset and Lambda invocation; None after an error. `upstream` is
    the Upstream resource behind it (None for a service addressed directly)."""
    if target is None:
        return None
    subset = route_subset(upstream, dest.subset, f"{field}.subset", report)
    ok, invocation = resolve_lambda(upstream, dest.destination_spec, refs, field, report)
    if not ok:
        return None
    if not subset and invocation is None:
        return target
    return replace(target, subset=subset or None, aws_lambda=invocation)
