"""What a destination adds to its cluster: the `subset` of the upstream's endpoints it
picks; for an `aws` upstream, the Lambda function `destinationSpec.aws` invokes; for an
`azure` one, the function app's Host and the function `destinationSpec.azure` calls; for a
`gcp` one, the service's Host and identity token. Shared by routes and UpstreamGroups, whose
destinations have the same shape.

The Upstream is looked up through `destination_view`: a host build then depends on what
refining reads of the Upstream, not on the rest of it. An Upstream's hosts, port, TLS or
health checks are its cluster's business; when they change, the thousands of hosts that
route to it are not built again (`hostcache.py`), only the cluster is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.virtualservice import Destination
from gw.translator import ir
from gw.translator.gateway.aws import resolve_lambda
from gw.translator.gateway.azure import resolve_function
from gw.translator.gateway.gcp import gcp_destination
from gw.translator.gateway.subsets import route_subset, subset_spec_of
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
    if upstream is None and dest.subset is None and dest.destination_spec is None:
        return target  # what each refinement below gives then, for most routes
    subset = route_subset(upstream, dest.subset, f"{field}.subset", report)
    ok, invocation = resolve_lambda(upstream, dest.destination_spec, refs, field, report)
    called, function = resolve_function(upstream, dest.destination_spec, refs, field, report)
    if not ok or not called:
        return None
    cloud = gcp_destination(upstream) | function
    if not subset and invocation is None and not cloud:
        return target
    return replace(target, subset=subset or None, aws_lambda=invocation, **cloud)


#: What `destination_view` gives for an Upstream that refines like none.
PLAIN: Literal["plain"] = "plain"


def destination_view(upstream: object) -> api.Upstream | Literal["plain"] | None:
    """What `refine_destination` reads of a destination's Upstream: None when there is
    none; `PLAIN` when it has no subsets and no cloud function (refining then gives what
    it gives without an Upstream: the tests check it); else the Upstream itself."""
    if not isinstance(upstream, api.Upstream):
        return None
    spec = upstream.spec
    if spec.aws is None and spec.azure is None and spec.gcp is None:
        if subset_spec_of(upstream) is None:
            return PLAIN
    return upstream


def destination_upstream(
    refs: Refs, ref: ResourceRef, *, referrer: ResourceKey, field: str
) -> tuple[bool, api.Upstream | None]:
    """Whether the Upstream a destination names is there, and the Upstream to refine the
    destination with (None for a plain one): resolved through `destination_view`."""
    view = refs.resolve_view(
        api.Upstream, ref, referrer=referrer, field=field, view=destination_view
    )
    return view is not None, view if isinstance(view, api.Upstream) else None
