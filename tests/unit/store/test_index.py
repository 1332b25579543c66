"""The folder store reads only what changed, and what it hands over is what reading the
whole folder again gives: random edit sequences, each step compared with a fresh store."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gw.api import ResourceKey
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.store.index import FolderIndex

US = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: default}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}}}
"""
BROKEN_DOC = "apiVersion: gw.vendor.io/v1\nkind: Upstream\nmetadata: {name: %s}\nspec: {bad: 1}\n"
FILES = ("a.yaml", "b.yaml", "sub/c.yaml", "sub/d.json")
NAMES = ("u1", "u2", "u3")


def document(name: str, port: int, broken: bool) -> str:
    return BROKEN_DOC % name if broken else US.format(name=name, port=port)


files = st.sampled_from(FILES)
contents = st.one_of(
    st.none(),  # the file is removed
    st.just("kind: [unclosed\n"),  # no longer parses
    st.lists(st.tuples(st.sampled_from(NAMES), st.integers(1, 3), st.booleans()), max_size=3),
)


def write(root: Path, name: str, content: object) -> None:
    path = root / name
    path.parent.mkdir(exist_ok=True)
    if content is None:
        path.unlink(missing_ok=True)
    elif isinstance(content, str):
        path.write_text(content)
    elif name.endswith(".json"):
        path.write_text("[]" if not content else "{}")  # JSON files: empty or a bad one
    else:
        assert isinstance(content, list)
        path.write_text("---\n".join(document(*doc) for doc in content))
    # Make every write visible to the stamp (mtime resolution may hide a quick rewrite).
    if path.exists():
        stamp = path.stat().st_mtime_ns + 1_000_000_000
        os.utime(path, ns=(stamp, stamp))


def same(one: Snapshot, two: Snapshot) -> None:
    assert one.resources == two.resources
    assert one.sources == two.sources
    assert [(str(e), e.key) for e in one.errors] == [(str(e), e.key) for e in two.errors]
    for kind in {k.kind for k in two.resources}:
        assert one.keys_of_kind(kind) == two.keys_of_kind(kind)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(files, contents, st.booleans()), min_size=1, max_size=12))
def test_incremental_reading_gives_what_a_fresh_read_gives(
    steps: list[tuple[str, object, bool]],
) -> None:
    """Two stores follow the same edits, one told which file changed (when `hinted`), one
    walking the folder; both must agree with the same files' states decided from scratch
    (a broken file remembers what it held, so a store that never saw the history cannot
    serve as the reference)."""
    root = Path(tempfile.mkdtemp(prefix="gw-index-"))
    try:
        store, walker = DirectoryStore(root), DirectoryStore(root)
        last = store.scan()
        walker.scan()
        last.keys_of_kind("Upstream")  # build the index, so that it is carried over
        for name, content, hinted in steps:
            write(root, name, content)
            hint = [str((root / name).resolve())] if hinted else None
            snapshot = store.scan(hint)
            walked = walker.scan()
            scratch = FolderIndex(walker._rel).update(list(walker._index.files.items()))
            same(snapshot, walked)
            same(walked, scratch)
            # Documents kept from the last read are what reading them again gives.
            fresh = DirectoryStore(root).scan()
            assert snapshot.resources == fresh.resources
            assert snapshot.sources == fresh.sources
            changed = snapshot.lineage.changed_since(last.lineage.token)
            assert changed is not None
            assert changed == {
                k
                for k in snapshot.resources.keys() | last.resources.keys()
                if snapshot.resources.get(k) is not last.resources.get(k)
            }
            last = snapshot
    finally:
        shutil.rmtree(root)


def test_a_hint_reads_only_the_named_file(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(US.format(name="a", port=1))
    (tmp_path / "b.yaml").write_text(US.format(name="b", port=1))
    store = DirectoryStore(tmp_path)
    first = store.scan()
    (tmp_path / "a.yaml").write_text(US.format(name="a", port=2))
    (tmp_path / "b.yaml").write_text(US.format(name="b", port=2))
    second = store.scan([str(tmp_path / "a.yaml")])
    a, b = ResourceKey("Upstream", "default", "a"), ResourceKey("Upstream", "default", "b")
    assert second.resources[a] is not first.resources[a]
    assert second.resources[b] is first.resources[b]  # not looked at: no event named it
    assert second.lineage.changed_since(first.lineage.token) == {a}
    assert store.scan(None).resources[b] is not first.resources[b]


def test_a_new_folder_is_walked(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.scan()
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "a.yaml").write_text(US.format(name="a", port=1))
    snapshot = store.scan([str(tmp_path / "new")])
    assert ResourceKey("Upstream", "default", "a") in snapshot.resources
