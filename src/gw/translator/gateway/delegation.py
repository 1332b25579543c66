"""`delegateAction`: a route hands a path prefix to the routes of RouteTables.

Delegated routes land in the root VirtualService's virtual host, in order: the tables a
selector picks are visited by ascending `weight`; routes of tables that share a weight are
re-sorted by path specificity so that a short prefix of one table does not hide a longer
one of another. A child route must extend its parent's prefix and keep its header,
query, method and case-sensitivity constraints (or inherit them with
`inheritableMatchers` / `inheritablePathMatchers`); child options are merged over the
parent's. Findings on a table go to the table and, wrapped as
`on sub route table <ns>.<name>: ...`, to the root VirtualService, so an error in a table
rejects the root too and its last accepted version keeps serving.
"""

from __future__ import annotations

import dataclasses
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
    for table, j, child in _ordered(tables):
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
        sub.add(j, child, dataclasses.replace(below, chain=(*chain, table.key)))


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


def _ordered(tables: list[api.RouteTable]) -> list[tuple[api.RouteTable, int, Route]]:
    """(table, index, route) in serving order."""
    out: list[tuple[api.RouteTable, int, Route]] = []
    ordered = sorted(tables, key=lambda t: (t.spec.weight, t.key))
    for _, same_weight in itertools.groupby(ordered, key=lambda t: t.spec.weight):
        group = list(same_weight)
        entries = [(t, j, r) for t in group for j, r in enumerate(t.spec.routes)]
        if len(group) > 1:
            entries.sort(key=lambda e: _specificity(e[2]))
        out.extend(entries)
    return out


def _specificity(route: Route) -> tuple[int, int]:
    """Exact paths first, then regexes, then prefixes; longer before shorter."""
    if not route.matchers:
        return (3, 0)
    m = route.matchers[0]
    if m.exact is not None:
        return (0, -len(m.exact))
    if m.regex is not None:
        return (1, -len(m.regex))
    return (2, -len(m.prefix or ""))
