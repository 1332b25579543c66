"""`delegateAction`: a route hands its requests to the routes of RouteTables, named by
reference or picked by a label selector (the established gateway's fields)."""

from __future__ import annotations

from typing import Literal

from gw.api.meta import Model, ResourceRef

#: The established expression operators; the symbols are accepted as aliases.
Operator = Literal[
    "Equals",
    "DoubleEquals",
    "NotEquals",
    "In",
    "NotIn",
    "Exists",
    "DoesNotExist",
    "GreaterThan",
    "LessThan",
    "=",
    "==",
    "!=",
    "in",
    "notin",
    "exists",
    "!",
    "gt",
    "lt",
]


class SelectorExpression(Model):
    key: str
    operator: Operator = "Equals"
    values: list[str] = []


class RouteTableSelector(Model):
    """Empty `namespaces`: the delegating resource's own namespace; `*`: every namespace."""

    namespaces: list[str] = []
    labels: dict[str, str] = {}
    expressions: list[SelectorExpression] = []


class DelegateAction(Model):
    ref: ResourceRef | None = None
    selector: RouteTableSelector | None = None
    #: Deprecated spelling of `ref`; takes precedence when set (as in the established API).
    name: str | None = None
    namespace: str | None = None


class OptionsConfigRefs(Model):
    """`optionsConfigRefs`: VirtualHostOption / RouteOption resources whose options apply
    under the inline ones (inline wins, then the first ref, then the next...)."""

    delegate_options: list[ResourceRef] = []
