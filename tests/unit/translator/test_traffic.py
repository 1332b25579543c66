"""The traffic options' stage-1 rules that goldens show only by example: where each
`filterStage` puts a processor, how host rewrites merge as one oneof, the CORS `UNION`
merge, percentages as fractions of a million, and that Envoy takes every filter at its
place in the chain."""

from __future__ import annotations

import pytest

from gw.api.extproc import FilterStage
from gw.api.traffic import CorsPolicyMergeSettings
from gw.api.virtualservice import RouteOptions
from gw.translator import ir
from gw.translator.envoy.filters import HTTP_FILTERS
from gw.translator.gateway.cors import merge_cors_policies
from gw.translator.gateway.extproc_settings import slot_of
from gw.translator.gateway.matching import per_million, percentage
from gw.translator.gateway.optionrefs import merge_over
from gw.translator.reports import ResourceReport


@pytest.mark.parametrize(
    ("stage", "predicate", "slot"),
    [
        ("FaultStage", "Before", "first"),
        ("FaultStage", "During", "after_fault"),
        ("CorsStage", "After", "after_cors"),
        ("AuthNStage", "Before", "after_cors"),
        ("AuthNStage", "After", "after_authn"),
        ("AuthZStage", "After", "after_authn"),
        ("RateLimitStage", "Before", "after_authz"),
        ("RateLimitStage", "During", "after_ratelimit"),
        ("RouteStage", "After", "last"),
    ],
)
def test_filter_stages_map_to_slots(stage: str, predicate: str, slot: str) -> None:
    assert slot_of(FilterStage(stage=stage, predicate=predicate)) == slot  # type: ignore[arg-type]


def test_an_unset_stage_is_the_protos_zero_value() -> None:
    assert slot_of(None) == slot_of(FilterStage(stage="FaultStage", predicate="During"))


def test_every_slot_has_a_place_in_the_chain() -> None:
    slots = {getattr(f, "slot", None) for f in HTTP_FILTERS} - {None}
    assert slots == {
        "first", "after_fault", "after_cors", "after_authn", "after_authz", "after_ratelimit",
        "last",
    }  # fmt: skip
    names = [f.name for f in HTTP_FILTERS]
    assert names.index("envoy.filters.http.fault") < names.index("envoy.filters.http.cors")
    assert names[-1] == "envoy.filters.http.router"


def test_host_rewrites_merge_as_one_oneof() -> None:
    inline = RouteOptions.model_validate({"hostRewrite": "a.example.com"})
    shared = RouteOptions.model_validate({"autoHostRewrite": True, "timeout": "5s"})
    merged = merge_over(inline, shared)
    assert merged is not None
    assert merged.host_rewrite == "a.example.com"
    assert merged.auto_host_rewrite is None  # the shared oneof member is not taken
    assert merged.timeout == "5s"  # other fields still are
    assert merge_over(None, shared) == shared


def _route(cors: ir.CorsPolicy | None) -> ir.Route:
    match = ir.RouteMatch(path_kind="prefix", path="/")
    return ir.Route(name="r", match=match, action=ir.DirectResponse(status=200), cors=cors)


def test_cors_union_adds_the_hosts_expose_headers() -> None:
    host = ir.CorsPolicy(allow_origins=("https://a",), expose_headers=("x-a", "x-b"))
    own = ir.CorsPolicy(allow_origins=("https://b",), expose_headers=("x-b", "x-c"))
    union = CorsPolicyMergeSettings(expose_headers="UNION")
    merged = merge_cors_policies([_route(own), _route(None)], host, union)
    assert merged[0].cors is not None
    assert merged[0].cors.expose_headers == ("x-a", "x-b", "x-c")
    assert merged[0].cors.allow_origins == ("https://b",)
    assert merged[1].cors is None
    default = CorsPolicyMergeSettings(expose_headers="DEFAULT")
    assert merge_cors_policies([_route(own)], host, default)[0].cors == own


def test_percentages_are_fractions_of_a_million() -> None:
    assert per_million(2.5) == ir.Fraction(numerator=25_000, denominator=1_000_000)
    assert per_million(100) == ir.Fraction(numerator=1_000_000, denominator=1_000_000)
    report = ResourceReport()
    assert percentage(100.5, "f", report) is None
    assert report.errors[0].message == "percentage must be between 0 and 100, received 100.5"
