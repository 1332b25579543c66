"""A host build's snapshot (`hostcache.WatchedSnapshot`) answers as the snapshot it
watches and records every look in the build's `Reads`, although it makes its recording
views only when the build first asks for them."""

from __future__ import annotations

from gw.api import Resource, ResourceKey
from gw.snapshot import InputError, Snapshot, Source
from gw.translator.gateway.hostcache import WatchedSnapshot
from gw.translator.refs import Reads

HERE = ResourceKey("Secret", "default", "here")
GONE = ResourceKey("Secret", "default", "gone")
OTHER = ResourceKey("Upstream", "default", "other")
#: Stand-in resources: the snapshot only holds them.
SECRET: Resource = object()  # type: ignore[assignment]
UPSTREAM: Resource = object()  # type: ignore[assignment]


def _snapshot() -> Snapshot:
    return Snapshot(
        resources={HERE: SECRET, OTHER: UPSTREAM},
        sources={HERE: Source("a.yaml", 1)},
        errors=(InputError(None, "bad", GONE),),
    )


def test_it_answers_as_the_snapshot_it_watches() -> None:
    inner = _snapshot()
    watched = WatchedSnapshot(inner, Reads())
    assert watched.resources[HERE] is SECRET
    assert watched.resources.get(GONE) is None
    assert dict(watched.resources) == dict(inner.resources)
    assert watched.errors == inner.errors
    assert watched.sources is inner.sources
    assert watched.lineage is inner.lineage
    assert watched.keys_of_kind("Secret") == inner.keys_of_kind("Secret")
    assert watched.kinds() == inner.kinds()


def test_nothing_is_recorded_until_the_build_looks() -> None:
    reads = Reads()
    WatchedSnapshot(_snapshot(), reads)
    assert reads == Reads()


def test_each_look_is_recorded() -> None:
    reads = Reads()
    watched = WatchedSnapshot(_snapshot(), reads)
    assert HERE in watched.resources
    assert watched.resources.get(GONE) is None
    assert reads.resources == {HERE: SECRET, GONE: None}
    assert not reads.broken and not reads.everything and not reads.kinds
    assert [e.key for e in watched.errors] == [GONE]
    assert reads.broken
    watched.keys_of_kind("Upstream")
    assert reads.kinds == {"Upstream": (UPSTREAM,)}
    assert not reads.everything
    watched.kinds()  # which kinds exist depends on every resource
    assert reads.everything


def test_walking_every_resource_is_recorded_as_reading_everything() -> None:
    reads = Reads()
    watched = WatchedSnapshot(_snapshot(), reads)
    assert len(list(watched)) == 2
    assert reads.everything
