"""What a destination adds to its cluster: the `subset` of the upstream's endpoints it
picks; for an `aws` upstream, the Lambda function `destinationSpec.aws` invokes; for an
`azure` one, the function app's Host and the function `destinationSpec.azure` calls; for a
`gcp` one, the service's Host and identity token. Shared by routes and UpstreamGroups, whose
destinations have the same shape."""

from __future__ import annotations

from dataclasses import replace

from gw import api
from gw.api.virtualservice import Destination
from gw.translator import ir
from gw.translator.gateway.aws import resolve_lambda
from gw.translator.gateway.azure import resolve_function
from gw.translator.gateway.gcp import gcp_destination
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
    """`target` with what its destination adds; None after an error. `upstream` is
    the Upstream resource behind it (None for a service addressed directly)."""
    if target is None:
        return None
    subset = route_subset(upstream, dest.subset, f"{field}.subset", report)
    ok, invocation = resolve_lambda(upstream, dest.destination_spec, refs, field, report)
    called, function = resolve_function(upstream, dest.destination_spec, refs, field, report)
    if not ok or not called:
        return None
    cloud = gcp_destination(upstream) | function
    if not subset and invocation is None and not cloud:
        return target
    return replace(target, subset=subset or None, aws_lambda=invocation, **cloud)
