"""DirectoryStore: reading a folder of manifests, and what happens when files break."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from pathlib import Path

import pytest

from gw.api import ResourceKey
from gw.store import directory
from gw.store.directory import DirectoryStore, ScanStopped
from gw.store.index import Document

VS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.example.com]
"""
US = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: 80}}]}}}}
"""


def key(kind: str, name: str) -> ResourceKey:
    return ResourceKey(kind, "default", name)


def test_reads_nested_folders_several_documents_and_json(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "two.yaml").write_text(
        VS.format(name="one") + "---\n---" + US.format(name="u")
    )
    (tmp_path / "b.json").write_text(
        '{"apiVersion": "gw.vendor.io/v1", "kind": "Upstream", "metadata": {"name": "j"},'
        ' "spec": {"static": {"hosts": [{"addr": "::1", "port": 80}]}}}'
    )
    (tmp_path / "ignored.txt").write_text("not a manifest")
    (tmp_path / ".hidden.yaml").write_text(VS.format(name="hidden"))
    snapshot = DirectoryStore(tmp_path).scan()
    assert set(snapshot.resources) == {
        key("VirtualService", "one"),
        key("Upstream", "u"),
        key("Upstream", "j"),
    }
    assert str(snapshot.sources[key("Upstream", "u")]) == "a/two.yaml, document 3"
    assert snapshot.errors == ()


def test_kind_list_is_unpacked(tmp_path: Path) -> None:
    (tmp_path / "list.yaml").write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: gw.vendor.io/v1, kind: Upstream, metadata: {name: a},"
        "   spec: {static: {hosts: [{addr: 127.0.0.1, port: 1}]}}}\n"
    )
    assert key("Upstream", "a") in DirectoryStore(tmp_path).scan().resources


def test_broken_file_keeps_its_resources_known_as_broken(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    path = tmp_path / "vs.yaml"
    path.write_text(VS.format(name="web") + "---" + US.format(name="u"))
    assert key("VirtualService", "web") in store.scan().resources
    path.write_text("kind: [unclosed\n")
    snapshot = store.scan()
    assert snapshot.resources == {}
    broken = {e.key: e for e in snapshot.errors}
    assert set(broken) == {key("VirtualService", "web"), key("Upstream", "u")}
    assert (
        "the file no longer parses: invalid YAML at line 2" in broken[key("Upstream", "u")].message
    )


def test_nameless_broken_document_keeps_its_old_identity(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    path = tmp_path / "vs.yaml"
    path.write_text(VS.format(name="web"))
    store.scan()
    path.write_text("apiVersion: gateway.vendor.io/v1\nkind: VirtualService\nmetadata: {}\n")
    (error,) = store.scan().errors
    assert error.key == key("VirtualService", "web")
    assert "metadata.name: required field is missing" in error.message


def test_unknown_field_names_file_document_and_path(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text(
        US.format(name="ok") + "---" + VS.format(name="typo").replace("domains", "domain")
    )
    snapshot = DirectoryStore(tmp_path).scan()
    (error,) = snapshot.errors
    assert error.key == key("VirtualService", "typo")
    assert str(error) == ("x.yaml, document 2: spec.virtualHost.domain: unknown field")
    assert key("Upstream", "ok") in snapshot.resources


def test_duplicate_definition_keeps_the_first(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(US.format(name="u"))
    (tmp_path / "b.yaml").write_text(US.format(name="u"))
    snapshot = DirectoryStore(tmp_path).scan()
    assert str(snapshot.sources[key("Upstream", "u")]) == "a.yaml, document 1"
    (error,) = snapshot.errors
    assert error.key == key("Upstream", "u") and "also defined in a.yaml" in error.message


def test_secret_values_never_appear_in_errors(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: Opaque\n"
        "data: {client-secret: 'hunter2 is not base64!'}\n"
    )
    (error,) = DirectoryStore(tmp_path).scan().errors
    assert "hunter2" not in str(error)
    assert "data.client-secret is not valid base64" in str(error)


def test_unchanged_files_are_not_parsed_again(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    (tmp_path / "a.yaml").write_text(US.format(name="a"))
    first = store.scan().resources[key("Upstream", "a")]
    (tmp_path / "b.yaml").write_text(US.format(name="b"))
    assert store.scan().resources[key("Upstream", "a")] is first


async def test_watch_yields_on_create_edit_and_delete(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    seen: asyncio.Queue[set[ResourceKey]] = asyncio.Queue()

    async def follow() -> None:
        async for snapshot in store.watch():
            await seen.put(set(snapshot.resources))

    task = asyncio.create_task(follow())

    async def next_with(predicate: object) -> set[ResourceKey]:
        while True:
            keys = await asyncio.wait_for(seen.get(), 10)
            if predicate(keys):  # type: ignore[operator]
                return keys

    try:
        await next_with(lambda k: k == set())
        (tmp_path / "a.yaml").write_text(US.format(name="a"))
        await next_with(lambda k: k == {key("Upstream", "a")})
        (tmp_path / "a.yaml").write_text(US.format(name="b"))
        await next_with(lambda k: k == {key("Upstream", "b")})
        (tmp_path / "a.yaml").unlink()
        await next_with(lambda k: k == set())
    finally:
        task.cancel()


async def test_watch_waits_out_a_truncate_then_write(tmp_path: Path) -> None:
    """Tools that truncate a file and then write it must not make its resources vanish."""
    path = tmp_path / "a.yaml"
    path.write_text(US.format(name="a"))
    store = DirectoryStore(tmp_path)
    snapshots: list[set[ResourceKey]] = []

    async def follow() -> None:
        async for snapshot in store.watch():
            snapshots.append(set(snapshot.resources))

    task = asyncio.create_task(follow())
    try:
        while not snapshots:
            await asyncio.sleep(0.01)
        with open(path, "w") as handle:  # truncated now...
            handle.flush()
            await asyncio.sleep(0.06)  # ...a slow writer...
            handle.write(US.format(name="b"))  # ...then the new content
        while key("Upstream", "b") not in snapshots[-1]:
            await asyncio.sleep(0.01)
    finally:
        task.cancel()
    assert all(s for s in snapshots), f"a snapshot lost every resource: {snapshots}"


def test_paths_that_are_not_regular_files_are_reported_not_read(tmp_path: Path) -> None:
    """A FIFO would block the reader forever (found by the reliability suite); a dangling
    link has nothing to read. Both are errors naming the file; a file that held resources
    and became one keeps them known (Rejected, last accepted version served)."""
    held = tmp_path / "held.yaml"
    held.write_text(US.format(name="kept"))
    store = DirectoryStore(tmp_path)
    assert key("Upstream", "kept") in store.scan().resources
    held.unlink()
    os.mkfifo(held)
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "missing.yaml")
    (tmp_path / "ok.yaml").write_text(US.format(name="ok"))
    snapshot = store.scan()
    assert set(snapshot.resources) == {key("Upstream", "ok")}
    errors = {str(e): e.key for e in snapshot.errors}
    assert errors == {
        "dangling.yaml: a symbolic link whose target does not exist; fix or remove the link": None,
        "held.yaml, document 1: the file no longer parses: not a regular file (a FIFO); "
        "gw reads only regular files": key("Upstream", "kept"),
    }


def test_a_link_loop_reads_each_folder_once(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "u.yaml").write_text(US.format(name="u"))
    (tmp_path / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "linked").symlink_to(tmp_path / "sub", target_is_directory=True)
    snapshot = DirectoryStore(tmp_path).scan()
    assert set(snapshot.resources) == {key("Upstream", "u")}
    assert snapshot.errors == ()


def test_a_stopped_scan_leaves_the_next_one_to_read_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scan told to stop raises `ScanStopped` at the next file; the folder's index keeps
    nothing of it, so the next scan reads the files it had read (new ones and edits)."""
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(US.format(name=name))
    store = DirectoryStore(tmp_path)
    store.scan()
    for name in ("a", "b", "c"):  # each file edited: every one must be read again
        (tmp_path / f"{name}.yaml").write_text(US.format(name=f"{name}2"))
    stop = threading.Event()
    parsed: list[object] = []
    parse = directory._parse

    def parse_then_stop(number: int, data: object, refusal: str | None) -> Document:
        parsed.append(data)
        stop.set()
        return parse(number, data, refusal)

    monkeypatch.setattr(directory, "_parse", parse_then_stop)
    with pytest.raises(ScanStopped):
        store.scan(stop=stop)
    assert len(parsed) == 1
    monkeypatch.setattr(directory, "_parse", parse)
    assert set(store.scan().resources) == {key("Upstream", f"{n}2") for n in ("a", "b", "c")}


def test_cancelling_a_watch_stops_its_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The read runs in the event loop's thread pool, which the loop's close waits for: a
    program stopped during the read of a large folder waited for all of it. Cancelling
    the wait stops the read at its next file. (The first file's parse is held until the
    wait is cancelled, which makes the read as slow as a large one.)"""
    for i in range(20):
        (tmp_path / f"u{i:02}.yaml").write_text(US.format(name=f"u{i}"))
    store = DirectoryStore(tmp_path)
    reading, go_on = threading.Event(), threading.Event()
    parsed: list[object] = []
    parse = directory._parse

    def held_parse(number: int, data: object, refusal: str | None) -> Document:
        parsed.append(data)
        reading.set()
        go_on.wait(10)
        return parse(number, data, refusal)

    monkeypatch.setattr(directory, "_parse", held_parse)

    async def stopped_while_reading() -> None:
        first = asyncio.ensure_future(store.watch().__anext__())
        assert await asyncio.to_thread(reading.wait, 10)
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
        go_on.set()

    asyncio.run(stopped_while_reading())  # returns once the loop's threads ended
    assert len(parsed) == 1
