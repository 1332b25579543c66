"""Settings `gloo.invalidConfigPolicy.replaceInvalidRoutes`: a route gw cannot build answers
the policy's response (`invalidRouteResponseCode`, `invalidRouteResponseBody`) instead of
rejecting its VirtualService or RouteTable, so that the other routes keep updating.

A route is replaced when building it finds an error in the route itself (its action, its
options, what they name), when its destination does not exist (an Upstream, UpstreamGroup
or service that is not there: the established InvalidDestinationWarning), or when it names
a resource that is rejected. The findings stay on the resource, as warnings that say the
route was replaced; the references the route resolved are dropped, so that a rejected
Upstream no longer rejects the VirtualService through it. Matchers gw cannot build cannot be
replaced (there is no path to answer on): they are left out, with a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gw.api.virtualservice import Route
from gw.translator import ir
from gw.translator.reports import ResourceReport

if TYPE_CHECKING:
    from gw.translator.gateway.delegation import Parent
    from gw.translator.gateway.routes import RouteBuilder

#: How a finding says that a destination does not exist.
MISSING_DESTINATION = "InvalidDestinationWarning"


def build_or_replace(
    builder: RouteBuilder,
    index: int,
    route: Route,
    parent: Parent | None,
    response: ir.DirectResponse,
) -> None:
    """Build `route` with `builder`; when it cannot be served as written, its matchers answer
    `response` instead."""
    report = builder.report
    scratch = ResourceReport()
    first_route, first_edge = len(builder.routes), len(builder.refs.edges)
    field = f"{builder.prefix}[{index}]"
    saved = builder.extauth.report, builder.ratelimit.report
    builder.report = builder.extauth.report = builder.ratelimit.report = scratch
    try:
        builder.build(index, route, parent)
        matches = builder.route_matches(route, field, parent)
    finally:
        builder.report = report
        builder.extauth.report, builder.ratelimit.report = saved
    rejected = [
        e
        for e in builder.refs.edges[first_edge:]
        if e.referent != builder.owner and builder.reports.rejected(e.referent)
    ]
    missing = any(MISSING_DESTINATION in w.message for w in scratch.warnings)
    for warning in scratch.warnings:
        report.warning(warning.field, warning.message)
    if not (scratch.errors or rejected or missing):
        return
    del builder.routes[first_route:]
    del builder.refs.edges[first_edge:]
    instead = (
        f"the route answers {response.status} instead"
        if matches
        else "the route is left out, none of its matchers could be built"
    ) + " (Settings gloo.invalidConfigPolicy.replaceInvalidRoutes)"
    for error in scratch.errors:
        report.warning(error.field, f"{error.message}; {instead}")
    for edge in rejected:
        referent = edge.referent
        report.warning(
            edge.field,
            f"{referent.kind} {referent.namespace}.{referent.name} is rejected; {instead}",
        )
    if missing:
        report.warning(field, f"its destination does not exist; {instead}")
    for match, where in matches:
        builder.routes.append(
            ir.Route(
                name=f"{builder.vhost_name}-route-{len(builder.routes)}",
                match=match,
                action=response,
                source=builder.origin(where),
                delegated_by=parent.via if parent else (),
            )
        )
