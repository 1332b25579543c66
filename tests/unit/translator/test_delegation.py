"""Delegation and options merging, unit by unit: the generic field merge, selector
expressions, and a rejected table's effect on a VirtualService accepted before."""

from __future__ import annotations

import pytest
import yaml

from gw.api import ResourceKey, parse_document
from gw.api.delegation import SelectorExpression
from gw.api.status import State
from gw.api.virtualservice import RouteOptions
from gw.snapshot import InputError, Snapshot
from gw.translator.gateway.optionrefs import merge_over
from gw.translator.gateway.selectors import matches
from gw.translator.translation import translate

VS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    routes:
      - matchers: [{prefix: /api}]
        delegateAction: {ref: {name: api}}
"""


def table(matcher: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {{name: api, namespace: default}}
spec:
  routes:
    - matchers: [{matcher}]
      directResponseAction: {{status: 200, body: api}}
"""


def snapshot(*docs: str) -> Snapshot:
    resources = {}
    for doc in docs:
        resource = parse_document(yaml.safe_load(doc))
        resources[resource.key] = resource
    return Snapshot(resources=resources, errors=())


def test_merge_keeps_set_fields_and_fills_the_rest() -> None:
    high = RouteOptions.model_validate({"prefixRewrite": "/high"})
    low = RouteOptions.model_validate({"prefixRewrite": "/low", "timeout": "2s"})
    merged = merge_over(high, low)
    assert merged is not None
    assert (merged.prefix_rewrite, merged.timeout) == ("/high", "2s")
    # A field set explicitly, even to its default, wins over the lower source.
    assert merge_over(RouteOptions.model_validate({"timeout": None}), low).timeout is None  # type: ignore[union-attr]
    assert merge_over(None, low) is low
    assert merge_over(high, None) is high


def test_merge_covers_every_field_of_the_model() -> None:
    """No field list to maintain: every option field merges, whichever feature added it."""
    values = {"timeout": "1s", "prefixRewrite": "/p", "hostRewrite": "h", "autoHostRewrite": True}
    low = RouteOptions.model_validate(values)
    merged = merge_over(RouteOptions(), low)
    assert merged is not None
    assert merged.model_dump(exclude_unset=True, by_alias=True) == values


@pytest.mark.parametrize(
    ("operator", "values", "labels", "expected"),
    [
        ("Equals", ["a"], {"k": "a"}, True),
        ("==", ["a"], {"k": "b"}, False),
        ("NotEquals", ["a"], {}, True),
        ("In", ["a", "b"], {"k": "b"}, True),
        ("NotIn", ["a", "b"], {"k": "b"}, False),
        ("Exists", [], {"k": ""}, True),
        ("DoesNotExist", [], {"k": "x"}, False),
        ("GreaterThan", ["2"], {"k": "3"}, True),
        ("lt", ["2"], {"k": "3"}, False),
        ("GreaterThan", ["2"], {"k": "x"}, False),
    ],
)
def test_selector_expressions(
    operator: str, values: list[str], labels: dict[str, str], expected: bool
) -> None:
    expression = SelectorExpression.model_validate(
        {"key": "k", "operator": operator, "values": values}
    )
    assert matches(expression, labels) is expected


def test_a_rejected_table_keeps_the_accepted_routes_of_its_virtual_service() -> None:
    first = translate(snapshot(VS, table("{prefix: /api/a}")))
    assert first.reports.state(ResourceKey("VirtualService", "default", "shop")) is State.ACCEPTED
    second = translate(snapshot(VS, table('{regex: "/api/(a"}')), previous=first.accepted)
    vs_key = ResourceKey("VirtualService", "default", "shop")
    assert second.reports.state(ResourceKey("RouteTable", "default", "api")) is State.REJECTED
    assert second.reports.state(vs_key) is State.REJECTED
    (listener,) = second.proxy.listeners
    (vhost,) = listener.virtual_hosts
    assert [r.match.path for r in vhost.routes] == ["/api/a"]


def test_an_unreadable_table_in_a_selector_scope_keeps_the_last_accepted_routes() -> None:
    """A table whose manifest broke cannot say whether the selector picks it: the
    VirtualService is rejected and keeps serving, instead of losing the table's routes."""
    selecting = VS.replace("{ref: {name: api}}", "{selector: {labels: {team: shop}}}")
    labelled = table("{prefix: /api/a}").replace(
        "namespace: default}", "namespace: default, labels: {team: shop}}"
    )
    first = translate(snapshot(selecting, labelled))
    vs_key = ResourceKey("VirtualService", "default", "shop")
    assert first.reports.state(vs_key) is State.ACCEPTED
    broken_key = ResourceKey("RouteTable", "default", "api")
    broken = snapshot(selecting)
    broken = Snapshot(
        resources=broken.resources, errors=(InputError(None, "bad yaml", broken_key),)
    )
    second = translate(broken, previous=first.accepted)
    assert second.reports.state(vs_key) is State.REJECTED
    (finding,) = second.reports.of(vs_key).errors
    assert finding.message == "RouteTable default.api is rejected; fix it first (see its status)"
    (listener,) = second.proxy.listeners
    (vhost,) = listener.virtual_hosts
    assert [r.match.path for r in vhost.routes] == ["/api/a"]
