"""RouteTable selectors: namespaces, labels, and label expressions with the established
operators (and their symbols)."""

from __future__ import annotations

from gw import api
from gw.api import ResourceKey
from gw.api.delegation import RouteTableSelector, SelectorExpression
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

_EQUALS = {"Equals", "DoubleEquals", "=", "=="}
_NOT_EQUALS = {"NotEquals", "!="}


def select_tables(
    selector: RouteTableSelector,
    *,
    owner: ResourceKey,
    refs: Refs,
    report: ResourceReport,
    field: str,
) -> list[api.RouteTable]:
    """The tables `selector` picks (linked as references of `owner`), or [] after a
    warning."""
    if selector.labels and selector.expressions:
        report.warning(field, "cannot use both labels and expressions within the same selector")
        return []
    for i, expression in enumerate(selector.expressions):
        problem = expression_problem(expression)
        if problem is not None:
            report.warning(
                f"{field}.expressions[{i}]",
                f"the route table selector expression is invalid: {problem}",
            )
            return []
    namespaces = selector.namespaces or [owner.namespace]
    picked = [
        table
        for table in refs.of_kind(api.RouteTable)
        if ("*" in namespaces or table.metadata.namespace in namespaces)
        and all(table.metadata.labels.get(k) == v for k, v in selector.labels.items())
        and all(matches(e, table.metadata.labels) for e in selector.expressions)
    ]
    # A table that no longer parses might be one the selector picked: its referrer is
    # rejected (through the reference) and keeps serving its last accepted routes, rather
    # than silently losing them.
    for key in refs.broken_of_kind(api.RouteTable):
        if "*" in namespaces or key.namespace in namespaces:
            refs.link(owner, field, key)
    if not picked:
        report.warning(field, "no route table matches the given selector")
    for table in picked:
        refs.link(owner, field, table.key)
    return picked


def expression_problem(e: SelectorExpression) -> str | None:
    single = _EQUALS | _NOT_EQUALS | {"GreaterThan", "LessThan", "gt", "lt"}
    if e.operator in single and len(e.values) != 1:
        return f"operator {e.operator} takes exactly one value"
    if e.operator in {"In", "NotIn", "in", "notin"} and not e.values:
        return f"operator {e.operator} takes at least one value"
    if e.operator in {"Exists", "DoesNotExist", "exists", "!"} and e.values:
        return f"operator {e.operator} takes no values"
    if (
        e.operator in {"GreaterThan", "LessThan", "gt", "lt"}
        and not e.values[0].lstrip("-").isdigit()
    ):
        return f"operator {e.operator} compares integers, not {e.values[0]!r}"
    return None


def matches(e: SelectorExpression, labels: dict[str, str]) -> bool:
    value = labels.get(e.key)
    op = e.operator
    if op in _EQUALS:
        return value == e.values[0]
    if op in _NOT_EQUALS:
        return value != e.values[0]
    if op in {"In", "in"}:
        return value in e.values
    if op in {"NotIn", "notin"}:
        return value not in e.values
    if op in {"Exists", "exists"}:
        return value is not None
    if op in {"DoesNotExist", "!"}:
        return value is None
    if value is None or not value.lstrip("-").isdigit():
        return False
    if op in {"GreaterThan", "gt"}:
        return int(value) > int(e.values[0])
    return int(value) < int(e.values[0])
