"""A route reads of its Upstream only what `destination_view` gives: the hosts that route to
an Upstream are not built again when anything else of it changes (`hostcache.py`). That is
right only if refining a destination with a plain Upstream gives what it gives with none;
checked here with every Upstream of the golden inputs and destinations that ask for each
thing refining can add."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gw import api
from gw.api import Resource, ResourceKey
from gw.api.virtualservice import Destination
from gw.store.directory import DirectoryStore
from gw.translator import ir
from gw.translator.gateway.destinations import PLAIN, destination_view, refine_destination
from gw.translator.refs import Reads, Refs, Viewed
from gw.translator.reports import ResourceReport
from tests.golden.test_golden import ALL_CASES

DESTINATIONS: list[dict[str, Any]] = [
    {},
    {"subset": {"values": {"color": "blue"}}},
    {"destinationSpec": {"aws": {"logicalName": "hello"}}},
    {"destinationSpec": {"azure": {"functionName": "hello"}}},
]


@cache
def golden_upstreams() -> list[tuple[Mapping[ResourceKey, Resource], api.Upstream]]:
    """Every Upstream the store reads from the golden inputs, with the resources of its case."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(ALL_CASES):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            shutil.copy(case, folder / case.name)
            resources = DirectoryStore(folder).scan().resources
            out += [(resources, r) for r in resources.values() if isinstance(r, api.Upstream)]
    return out


def refined(
    upstream: api.Upstream | None, dest: Destination, refs: Refs
) -> tuple[ir.WeightedCluster | None, list[Any], list[Any]]:
    report = ResourceReport()
    target = ir.WeightedCluster(cluster="c")
    out = refine_destination(target, upstream, dest, refs=refs, field="d", report=report)
    return out, report.errors, report.warnings


def test_the_golden_upstreams_are_of_both_sorts() -> None:
    views = [destination_view(u) for _, u in golden_upstreams()]
    assert PLAIN in views
    assert any(isinstance(v, api.Upstream) for v in views)
    assert destination_view(None) is None


@pytest.mark.parametrize("spec", DESTINATIONS, ids=lambda d: ",".join(d) or "plain")
def test_a_plain_upstream_refines_like_none(spec: dict[str, Any]) -> None:
    for resources, upstream in golden_upstreams():
        dest = Destination.model_validate({"upstream": {"name": upstream.metadata.name}, **spec})
        refs = Refs(resources, set())
        view = destination_view(upstream)
        if view == PLAIN:
            assert refined(upstream, dest, refs) == refined(None, dest, refs), upstream.key
        else:
            assert view is upstream


def test_what_a_build_records_of_a_resource_it_views() -> None:
    """Through one view: what the view gave; looked up whole as well, or through another
    view: the object itself (a memo is then valid only while it is the very object)."""
    resources, upstream = next(
        (r, u) for r, u in golden_upstreams() if destination_view(u) == PLAIN
    )
    ref = api.ResourceRef(name=upstream.metadata.name, namespace=upstream.metadata.namespace)
    owner = ResourceKey("VirtualService", upstream.metadata.namespace, "vs")

    def recorded(*lookups: str) -> object:
        reads = Reads()
        refs = Refs(resources, set()).scope(reads)
        for lookup in lookups:
            if lookup == "whole":
                refs.resolve(api.Upstream, ref, referrer=owner, field="f")
            else:
                view = destination_view if lookup == "view" else lambda u: u is not None
                refs.resolve_view(api.Upstream, ref, referrer=owner, field="f", view=view)
        return reads.resources[upstream.key]

    viewed = recorded("view", "view")
    assert isinstance(viewed, Viewed) and viewed.value == PLAIN
    assert viewed.holds(upstream.model_copy(update={"status": "another object"}))
    assert not viewed.holds(None)
    for lookups in (("view", "whole"), ("whole", "view"), ("view", "other")):
        assert recorded(*lookups) is upstream, lookups
