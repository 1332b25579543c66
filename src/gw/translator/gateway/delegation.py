"""`delegateAction`: a route hands a path prefix to the routes of RouteTables.

Delegated routes land in the root VirtualService's virtual host, in order: the tables a
selector picks are visited by ascending `weight`; routes of tables that share a weight are
re-sorted by path (`sort_by_path`) so that a short prefix of one table does not hide a
longer one of another, and the delegating resource is warned that its order was changed.
A child route must extend its parent's prefix and keep its header, query, method and
case-sensitivity constraints (or inherit them with
`inheritableMatchers` / `inheritablePathMatchers`); child options are merged over the
parent's. Findings on a table go to the table and, wrapped as
`on sub route table <ns>.<name>: ...`, to the root VirtualService, so an error in a table
rejects the root too and its last accepted version keeps serving.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.delegation import DelegateAction
from gw.api.virtualservice import Matcher, Route, RouteOptions
from gw.translator import ir
from gw.translator.gateway.selectors import select_tables
from gw.translator.reports import Finding, ResourceReport

if TYPE_CHECKING:
    from gw.translator.gateway.routes import RouteBuilder

_INVALID = "invalid route: "
_PREFIX = "route table matchers must begin with the prefix of their parent route's matcher"


@dataclass(frozen=True, slots=True)
class Parent:
    """What a delegating route hands down to the routes of its tables."""

    match: ir.RouteMatch
    options: RouteOptions | None
    inheritable_matchers: bool
    inheritable_path_matchers: bool
    #: The route tables from the root to here: a table met again closes a cycle.
    chain: tuple[ResourceKey, ...]
    #: Where the root VirtualService reports what happens below (its delegating route).
    root_field: str
    #: The delegating routes from the root down to here (`ir.Route.delegated_by`).
    via: tuple[ir.RouteOrigin, ...] = ()


@dataclass(slots=True)
class RelayedReport(ResourceReport):
    """A route table's report that also copies each finding to the root VirtualService."""

    target: ResourceReport = dataclasses.field(default_factory=ResourceReport)
    root: ResourceReport = dataclasses.field(default_factory=ResourceReport)
    root_field: str = ""
    table: str = ""

    def error(self, field: str, message: str) -> None:
        self.target.error(field, message)
        self.root.error(self.root_field, self._wrapped(field, message))

    def warning(self, field: str, message: str) -> None:
        self.target.warning(field, message)
        self.root.warning(self.root_field, self._wrapped(field, message))

    def _wrapped(self, field: str, message: str) -> str:
        return f"on sub route table {self.table}: {Finding(field, message)}"


def delegate(
    builder: RouteBuilder, index: int, route: Route, options: RouteOptions, parent: Parent | None
) -> None:
    """Add the routes of the tables `route` delegates to."""
    field = f"{builder.prefix}[{index}]"
    assert route.delegate_action is not None
    match = _delegating_match(builder, route, field)
    if match is not None and parent is not None:
        match = inherit(match, parent, f"{field}.matchers[0]", builder.report)
    if match is None:
        return
    tables = _targets(builder, route.delegate_action, f"{field}.delegateAction")
    chain = parent.chain if parent else ()

    def flag(own: bool | None, inherited: bool | None) -> bool:
        return own if own is not None else bool(inherited)

    below = Parent(
        match=match,
        options=options if options.model_fields_set else None,
        inheritable_matchers=flag(
            route.inheritable_matchers, parent.inheritable_matchers if parent else None
        ),
        inheritable_path_matchers=flag(
            route.inheritable_path_matchers, parent.inheritable_path_matchers if parent else None
        ),
        chain=chain,
        root_field=parent.root_field if parent else f"{field}.delegateAction",
        via=(*(parent.via if parent else ()), builder.origin(field)),
    )
    children: dict[ResourceKey, RouteBuilder] = {}
    for group in _weight_groups(tables):
        start, starts = len(builder.routes), len(builder.route_starts)
        for table in group:
            if table.key in chain:
                cycle = " -> ".join(f"{k.namespace}.{k.name}" for k in (*chain, table.key))
                builder.report.error(
                    f"{field}.delegateAction", f"{_INVALID}delegation cycle detected: {cycle}"
                )
                continue
            sub = children.get(table.key)
            if sub is None:
                report = RelayedReport(
                    target=builder.reports.of(table.key),
                    root=builder.root_report,
                    root_field=below.root_field,
                    table=f"{table.metadata.namespace}.{table.metadata.name}",
                )
                sub = children[table.key] = builder.for_table(table, report)
            for j, child in enumerate(table.spec.routes):
                sub.add(j, child, dataclasses.replace(below, chain=(*chain, table.key)))
        if len(group) > 1:
            sort_by_path(builder, start, starts)
            names = ", ".join(f"{t.metadata.namespace}.{t.metadata.name}" for t in group)
            builder.report.warning(
                f"{field}.delegateAction",
                f"route tables {names} have the same weight ({group[0].spec.weight}): their "
                "routes were sorted by path (exact, then regex, then prefix paths, each in "
                "descending order, so /a/b before /a) instead of kept in the order written; "
                "give each table its own weight to choose the order",
            )


def _delegating_match(builder: RouteBuilder, route: Route, field: str) -> ir.RouteMatch | None:
    if len(route.matchers) > 1:
        builder.report.error(
            f"{field}.matchers",
            f"{_INVALID}routes with delegate actions must omit or specify a single matcher",
        )
        return None
    matcher = route.matchers[0] if route.matchers else Matcher(prefix="/")
    if matcher.exact is not None or matcher.regex is not None or matcher.connect_matcher:
        builder.report.error(
            f"{field}.matchers[0]",
            f"{_INVALID}routes with delegate actions must use a prefix matcher",
        )
        return None
    if matcher.prefix is None:
        matcher = matcher.model_copy(update={"prefix": "/"})
    return builder.match(matcher, f"{field}.matchers[0]")


def inherit(
    match: ir.RouteMatch, parent: Parent, field: str, report: ResourceReport
) -> ir.RouteMatch | None:
    """A child route's match under `parent`, or None after a warning (the route is left
    out: it could never be reached through its parent)."""
    up = parent.match
    if parent.inheritable_path_matchers:
        match = dataclasses.replace(
            match, path_kind=up.path_kind, path=up.path, case_sensitive=up.case_sensitive
        )
    if parent.inheritable_matchers:
        match = dataclasses.replace(
            match,
            headers=_union(up.headers, match.headers),
            query=_union(up.query, match.query),
            methods=match.methods or up.methods,
        )
    problem = _violation(match, up)
    if problem is not None:
        report.warning(field, f"{_INVALID}{problem}")
        return None
    return match


def _violation(match: ir.RouteMatch, up: ir.RouteMatch) -> str | None:
    if not match.path.startswith(up.path):
        return f"{_PREFIX}: required prefix: {up.path}, prefix: {match.path}"
    what = (
        "route table matchers must have all {} that were specified on their parent route's matcher"
    )
    if not set(up.headers) <= set(match.headers):
        return what.format("headers")
    if not set(up.query) <= set(match.query):
        return what.format("query params")
    if not set(up.methods) <= set(match.methods) and up.methods:
        return what.format("methods")
    if match.case_sensitive != up.case_sensitive:
        return (
            "route table matchers must have the same case sensitivity "
            "as their parent route's matcher"
        )
    return None


def _union(first: tuple[object, ...], second: tuple[object, ...]) -> tuple:  # type: ignore[type-arg]
    return (*first, *(x for x in second if x not in first))


def _targets(builder: RouteBuilder, action: DelegateAction, field: str) -> list[api.RouteTable]:
    ref = action.ref
    if action.name is not None:
        ref = ResourceRef(name=action.name, namespace=action.namespace or "")
    if ref is not None and action.selector is not None and action.name is None:
        builder.report.error(field, "set one of ref or selector, not both")
        return []
    if ref is not None:
        found = builder.refs.resolve(
            api.RouteTable, ref, referrer=builder.owner, field=f"{field}.ref"
        )
        key = builder.refs.key(api.RouteTable, ref, builder.owner)
        if found is None and not builder.refs.exists(key):
            builder.report.warning(
                f"{field}.ref", f"route table {key.namespace}.{key.name} missing"
            )
        return [found] if found is not None else []
    if action.selector is None:
        builder.report.warning(
            field,
            "cannot determine delegation target: you must specify a route table "
            "either via a resource reference or a selector",
        )
        return []
    return select_tables(
        action.selector,
        owner=builder.owner,
        refs=builder.refs,
        report=builder.report,
        field=f"{field}.selector",
    )


def _weight_groups(tables: list[api.RouteTable]) -> list[list[api.RouteTable]]:
    """The tables by ascending weight (then namespace and name), those of one weight together."""
    ordered = sorted(tables, key=lambda t: (t.spec.weight, t.key))
    return [list(g) for _, g in itertools.groupby(ordered, key=lambda t: t.spec.weight)]


def sort_by_path(builder: RouteBuilder, start: int, starts: int) -> None:
    """Re-sort the routes built since `start` (the routes of tables sharing a weight, nested
    tables' included), source route by source route, as the established gateway does: more
    methods first, then exact before regex before prefix paths, then the greater path string
    first (so `/a/long` before `/a`); the sort is stable. A source route with several
    matchers moves whole, placed by its most specific matcher. Envoy names follow position."""
    bounds = [*builder.route_starts[starts:], len(builder.routes)]
    units = [builder.routes[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if a < b]
    units.sort(key=functools.cmp_to_key(_compare_units))
    del builder.routes[start:], builder.route_starts[starts:]
    for unit in units:
        builder.route_starts.append(len(builder.routes))
        for route in unit:
            name = f"{builder.vhost_name}-route-{len(builder.routes)}"
            builder.routes.append(dataclasses.replace(route, name=name))


_PATH_PRIORITY = {"exact": 1, "regex": 2, "prefix": 3}


def _before(a: ir.RouteMatch, b: ir.RouteMatch) -> bool:
    if len(a.methods) != len(b.methods):
        return len(a.methods) > len(b.methods)
    if a.path_kind != b.path_kind:
        return _PATH_PRIORITY[a.path_kind] < _PATH_PRIORITY[b.path_kind]
    return a.path > b.path


def _most_specific(unit: list[ir.Route]) -> ir.RouteMatch:
    best = unit[0].match
    for route in unit[1:]:
        if _before(route.match, best):
            best = route.match
    return best


def _compare_units(a: list[ir.Route], b: list[ir.Route]) -> int:
    first, second = _most_specific(a), _most_specific(b)
    return -1 if _before(first, second) else 1 if _before(second, first) else 0
