"""A route reads of its Upstream only what `destination_view` gives: the hosts that route to
an Upstream are not built again when anything else of it changes (`hostcache.py`). That is
right only if refining a destination with a plain Upstream gives what it gives with none;
checked here with every Upstream of the golden inputs and destinations that ask for each
thing refining can add."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gw import api
from gw.api import Resource, ResourceKey
from gw.api.virtualservice import Destination
from gw.store.directory import DirectoryStore
from gw.translator import ir
from gw.translator.gateway.destinations import PLAIN, destination_view, refine_destination
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport
from tests.golden.test_golden import ALL_CASES

DESTINATIONS: list[dict[str, Any]] = [
    {},
    {"subset": {"values": {"color": "blue"}}},
    {"destinationSpec": {"aws": {"logicalName": "hello"}}},
    {"destinationSpec": {"azure": {"functionName": "hello"}}},
]


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


UPSTREAMS = golden_upstreams()


def refined(
    upstream: api.Upstream | None, dest: Destination, refs: Refs
) -> tuple[ir.WeightedCluster | None, list[Any], list[Any]]:
    report = ResourceReport()
    target = ir.WeightedCluster(cluster="c")
    out = refine_destination(target, upstream, dest, refs=refs, field="d", report=report)
    return out, report.errors, report.warnings


def test_the_golden_upstreams_are_of_both_sorts() -> None:
    views = [destination_view(u) for _, u in UPSTREAMS]
    assert PLAIN in views
    assert any(isinstance(v, api.Upstream) for v in views)
    assert destination_view(None) is None


@pytest.mark.parametrize("spec", DESTINATIONS, ids=lambda d: ",".join(d) or "plain")
def test_a_plain_upstream_refines_like_none(spec: dict[str, Any]) -> None:
    for resources, upstream in UPSTREAMS:
        dest = Destination.model_validate({"upstream": {"name": upstream.metadata.name}, **spec})
        refs = Refs(resources, set())
        view = destination_view(upstream)
        if view == PLAIN:
            assert refined(upstream, dest, refs) == refined(None, dest, refs), upstream.key
        else:
            assert view is upstream
