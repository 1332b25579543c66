"""Label selection: which resources a label map or a list of label expressions picks.

The operators are the established gateway's (REFERENCE.md §1.2), with the orchestrator's
label-selector meaning: `NotEquals` and `NotIn` also pick resources without the label;
`GreaterThan`/`LessThan` compare integers and never pick a resource whose label is not one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gw.api.gateway import LabelExpression
from gw.translator.reports import ResourceReport

_ONE_VALUE = frozenset({"Equals", "DoubleEquals", "NotEquals", "GreaterThan", "LessThan"})
_NO_VALUE = frozenset({"Exists", "DoesNotExist"})


def check_expressions(
    expressions: Sequence[LabelExpression], field: str, report: ResourceReport
) -> bool:
    """Report expressions that cannot be evaluated; True when all can."""
    ok = True
    for i, expr in enumerate(expressions):
        where = f"{field}[{i}].values"
        count = len(expr.values)
        if expr.operator in _ONE_VALUE and count != 1:
            report.error(where, f"operator {expr.operator} needs exactly one value, got {count}")
            ok = False
        elif expr.operator in _NO_VALUE and count:
            report.error(where, f"operator {expr.operator} takes no values, got {count}")
            ok = False
        elif expr.operator in ("In", "NotIn") and not count:
            report.error(where, f"operator {expr.operator} needs at least one value")
            ok = False
        elif expr.operator in ("GreaterThan", "LessThan") and not _is_int(expr.values[0]):
            report.error(
                where, f"operator {expr.operator} needs an integer, got {expr.values[0]!r}"
            )
            ok = False
    return ok


def matches_labels(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Every label of the selector is set to its value (AND)."""
    return all(labels.get(k) == v for k, v in selector.items())


def matches_expressions(expressions: Sequence[LabelExpression], labels: Mapping[str, str]) -> bool:
    """Every expression holds (AND). Expressions must have passed `check_expressions`."""
    return all(_holds(e, labels) for e in expressions)


def _holds(expr: LabelExpression, labels: Mapping[str, str]) -> bool:
    value = labels.get(expr.key)
    op = expr.operator
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Equals", "DoubleEquals", "In"):
        return value is not None and value in expr.values
    if op in ("NotEquals", "NotIn"):
        return value not in expr.values
    if value is None or not _is_int(value):
        return False
    if op == "GreaterThan":
        return int(value) > int(expr.values[0])
    return int(value) < int(expr.values[0])


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True
