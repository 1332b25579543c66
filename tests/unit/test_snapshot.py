"""`Snapshot.sorted_keys` gives what sorting every key gives, from the index by kind, for
fresh snapshots and for snapshots derived from others (whose index is carried over)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gw.api import Resource, ResourceKey
from gw.snapshot import Snapshot

keys = st.builds(
    ResourceKey,
    st.sampled_from(["VirtualService", "Upstream", "Secret", "AuthConfig"]),
    st.sampled_from(["", "default", "gw-system", "team-a"]),
    st.text("abz-0", min_size=1, max_size=3),
)
#: A stand-in resource per key: `sorted_keys` reads the keys only.
RESOURCE: Resource = object()  # type: ignore[assignment]


@given(
    held=st.sets(keys, max_size=30),
    extra=st.lists(keys, max_size=6),
    changed=st.sets(keys, max_size=8),
)
def test_sorted_keys_are_the_keys_sorted(
    held: set[ResourceKey], extra: list[ResourceKey], changed: set[ResourceKey]
) -> None:
    snapshot = Snapshot(resources=dict.fromkeys(held, RESOURCE))
    assert snapshot.sorted_keys(extra) == sorted(held | set(extra))
    assert snapshot.sorted_keys() == sorted(held)
    # Derived: some keys removed, some added; the index comes from the first snapshot.
    after = {k: RESOURCE for k in held ^ changed}
    derived = snapshot.derive(after, changed)
    assert derived.sorted_keys(extra) == sorted(set(after) | set(extra))
