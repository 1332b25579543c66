"""`Tallies`: a tally moved on by the changed keys answers what drawing from every
resource again answers, over random sequences of edits (added, changed, removed
VirtualServices, and resources of another kind under the same names)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from gw import api
from gw.api import Resource, ResourceKey
from gw.snapshot import Snapshot
from gw.translator.tally import Tallies

NAMES = [f"vs{i}" for i in range(6)]
DOMAINS = ["a", "b", "c", "d"]


def domains(vs: api.VirtualService) -> frozenset[Hashable]:
    """The draw under test: the domains of a VirtualService."""
    return frozenset(vs.spec.virtual_host.domains) if vs.spec.virtual_host else frozenset()


def virtual_service(name: str, domains: list[str]) -> api.VirtualService:
    return api.VirtualService.model_validate(
        {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "VirtualService",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"virtualHost": {"domains": domains}},
        }
    )


def upstream(name: str) -> api.Upstream:
    return api.Upstream.model_validate(
        {
            "apiVersion": "gateway.vendor.io/v1",
            "kind": "Upstream",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": 9}]}},
        }
    )


edit = st.tuples(
    st.sampled_from(NAMES),
    st.one_of(st.none(), st.just("upstream"), st.lists(st.sampled_from(DOMAINS), max_size=3)),
)


def apply(
    resources: Mapping[ResourceKey, Resource], name: str, what: None | str | list[str]
) -> tuple[dict[ResourceKey, Resource], set[ResourceKey]]:
    out = dict(resources)
    vs_key = ResourceKey(api.VirtualService.KIND, "ns", name)
    up_key = ResourceKey(api.Upstream.KIND, "ns", name)
    if what is None:
        out.pop(vs_key, None)
    elif what == "upstream":
        out[up_key] = upstream(name)
    else:
        out[vs_key] = virtual_service(name, list(what))
    return out, {vs_key, up_key}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(edit, max_size=4), min_size=1, max_size=8))
def test_moved_tally_equals_drawn_tally(
    steps: list[list[tuple[str, None | str | list[str]]]],
) -> None:
    resources: dict[ResourceKey, Resource] = {}
    snapshot = Snapshot(resources)
    tallies = Tallies(snapshot.resources, snapshot.keys_of_kind)
    tallies.values(api.VirtualService, domains)
    for step in steps:
        changed: set[ResourceKey] = set()
        for name, what in step:
            resources, keys = apply(resources, name, what)
            changed |= keys
        snapshot = Snapshot(resources)
        tallies = tallies.moved(snapshot.resources, snapshot.keys_of_kind, changed)
        afresh = Tallies(snapshot.resources, snapshot.keys_of_kind)
        expected = {d for vs in snapshot.of_kind(api.VirtualService) for d in domains(vs)}
        assert tallies.values(api.VirtualService, domains) == expected
        assert afresh.values(api.VirtualService, domains) == expected


def test_a_tally_not_asked_for_is_drawn_again() -> None:
    """A translation that did not ask for a tally does not carry it: the next one draws it
    from every resource (moving a stale one on would miss the edits in between)."""
    first = {ResourceKey(api.VirtualService.KIND, "ns", "x"): virtual_service("x", ["a"])}
    tallies = Tallies(first, Snapshot(first).keys_of_kind)
    assert tallies.values(api.VirtualService, domains) == {"a"}
    second = {ResourceKey(api.VirtualService.KIND, "ns", "x"): virtual_service("x", ["b"])}
    skipped = tallies.moved(second, Snapshot(second).keys_of_kind, second.keys())
    third = {ResourceKey(api.VirtualService.KIND, "ns", "x"): virtual_service("x", ["c"])}
    later = skipped.moved(third, Snapshot(third).keys_of_kind, ())  # nothing changed since
    assert later.values(api.VirtualService, domains) == {"c"}
