"""What a manifest file may cost (Settings `directoryConfigSource`), and files or documents
that break reading in ways nobody foresaw: always an input error, never a crash."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gw.api import ResourceKey
from gw.store import directory
from gw.store.directory import DirectoryStore
from gw.store.manifests import Limits

US = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: default}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: 80}}]}}}}
"""
SETTINGS = """apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  directoryConfigSource: {{{limits}}}
"""


def upstream(name: str) -> ResourceKey:
    return ResourceKey("Upstream", "default", name)


def errors_of(store: DirectoryStore, path: str) -> list[str]:
    snapshot = store.scan()
    return [e.message for e in snapshot.errors if e.source and e.source.path == path]


def test_defaults() -> None:
    assert Limits() == Limits(
        max_file_bytes=4 * 1024 * 1024,
        max_documents=10_000,
        max_alias_expansions=10_000,
        max_nesting_depth=100,
    )


def test_a_file_at_the_size_limit_is_read_one_byte_more_is_not(tmp_path: Path) -> None:
    text = US.format(name="a")
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(limits=f"maxFileBytes: {len(text)}"))
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(US.format(name="b") + "#")
    store = DirectoryStore(tmp_path)
    assert upstream("a") in store.scan().resources
    (message,) = errors_of(store, "b.yaml")
    # b.yaml was read under the defaults before the Settings were: its resource stays known
    assert message == (
        f"the file no longer parses: the file has {len(text) + 1:,} bytes, more than the "
        f"{len(text):,} a manifest file may have (Settings "
        "spec.directoryConfigSource.maxFileBytes); split it into several files or raise the limit"
    )


def test_new_limits_apply_to_every_file_in_the_same_scan(tmp_path: Path) -> None:
    (tmp_path / "many.yaml").write_text("---\n".join(US.format(name=f"u{i}") for i in range(3)))
    store = DirectoryStore(tmp_path)
    assert len(store.scan().resources) == 3
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(limits="maxDocuments: 2"))
    assert (
        errors_of(store, "many.yaml")
        == [
            "the file no longer parses: the file holds more than 2 documents (Settings "
            "spec.directoryConfigSource.maxDocuments); split it into several files or raise the "
            "limit"
        ]
        * 3
    )  # each resource the file held is Rejected, and keeps serving what it was
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(limits="maxDocuments: 3"))
    assert len(store.scan().resources) == 4  # three upstreams and the Settings


def test_broken_settings_keep_the_limits_they_set(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(limits="maxDocuments: 1"))
    (tmp_path / "two.yaml").write_text(US.format(name="a") + "---\n" + US.format(name="b"))
    store = DirectoryStore(tmp_path)
    assert errors_of(store, "two.yaml")
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(limits="maxDocuments: 1, typo: 1"))
    assert errors_of(store, "two.yaml") and store.limits.max_documents == 1
    (tmp_path / "settings.yaml").unlink()  # no Settings: the defaults
    assert not errors_of(store, "two.yaml") and store.limits == Limits()


def test_a_document_beyond_a_limit_is_refused_alone(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    (tmp_path / "settings.yaml").write_text(
        SETTINGS.format(limits="maxAliasExpansions: 50, maxNestingDepth: 6")
    )
    (tmp_path / "mixed.yaml").write_text(
        US.format(name="bomb").replace("spec:", bomb + "spec:")
        + "---\n"
        + US.format(name="deep").replace("spec:", "deep: [[[[[[1]]]]]]\nspec:")
        + "---\n"
        + US.format(name="fine")
    )
    snapshot = DirectoryStore(tmp_path).scan()
    assert upstream("fine") in snapshot.resources
    by_key = {e.key: e.message for e in snapshot.errors}
    assert by_key[upstream("bomb")] == (
        "its aliases expand to 110 more values, more than 50 (Settings "
        "spec.directoryConfigSource.maxAliasExpansions); write the values out or raise the limit"
    )
    assert by_key[upstream("deep")] == (
        "nested more than 6 levels deep (Settings spec.directoryConfigSource.maxNestingDepth)"
    )


def test_ordinary_aliases_and_merge_keys_are_fine(tmp_path: Path) -> None:
    (tmp_path / "vs.yaml").write_text(
        """apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  virtualHost:
    domains: [web.example.com]
    routes:
      - matchers: [{prefix: /a}]
        directResponseAction: &ok {status: 200, body: ok}
      - matchers: [{prefix: /b}]
        directResponseAction: {<<: *ok, body: b}
"""
    )
    snapshot = DirectoryStore(tmp_path).scan()
    assert snapshot.errors == () and len(snapshot.resources) == 1


def test_an_unforeseen_failure_is_an_input_error_of_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Stands in for a parser bug: whatever a document makes reading raise, the store
    reports it and goes on (it used to end the folder watcher)."""

    def broken(doc: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    (tmp_path / "a.yaml").write_text(US.format(name="a"))
    (tmp_path / "b.yaml").write_text(US.format(name="b"))
    store = DirectoryStore(tmp_path)
    assert len(store.scan().resources) == 2
    monkeypatch.setattr(directory, "parse_document", broken)
    (tmp_path / "b.yaml").write_text(US.format(name="b") + "# edited\n")
    snapshot = store.scan()
    assert upstream("a") in snapshot.resources
    (error,) = snapshot.errors
    assert error.key == upstream("b")
    assert error.message == (
        "gw could not read this (RecursionError); this is a bug in gw, and the control "
        "plane's log has the details"
    )
    assert "parsing document 1 failed unexpectedly" in caplog.text


async def test_watch_reads_in_a_worker_thread(tmp_path: Path) -> None:
    """The event loop keeps serving while a folder is read."""
    import threading

    readers: list[str] = []
    store = DirectoryStore(tmp_path)
    scan = store.scan

    def recording_scan(*args: Any, **kwargs: Any) -> object:
        readers.append(threading.current_thread().name)
        return scan(*args, **kwargs)

    store.scan = recording_scan  # type: ignore[method-assign]
    watch = store.watch()
    await anext(watch)
    await watch.aclose()
    assert readers and readers[0] != threading.main_thread().name


def test_a_refused_document_of_another_kind_is_blamed_on_the_file(tmp_path: Path) -> None:
    """A `List` or a Deployment has no status: its refusal is an input error of the file."""
    deep = "[" * 101 + "]" * 101
    (tmp_path / "other.yaml").write_text(
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec: {deep}\n---\n"
        f"apiVersion: v1\nkind: List\nitems: [{deep}]\n"
    )
    errors = DirectoryStore(tmp_path).scan().errors
    assert [(e.key, str(e.source), e.message[:25]) for e in errors] == [
        (None, "other.yaml, document 1", "nested more than 100 leve"),
        (None, "other.yaml, document 2", "nested more than 100 leve"),
    ]


#: Documents of every shape the store's own construction builds or hands to PyYAML's.
SHAPES = [
    "a: plain\nb: 'quoted'\nc: \"double\"\nd: ''\ne:\nf: ~\ng: null\n",
    "ints: [1, -2, 0x1f, 0o17, 1_000, 190:20:30]\nfloats: [1.5, .inf, -.Inf, .nan, 1e3]\n",
    "bools: [true, False, yes, off, on, No]\nwhen: 2001-12-14t21:59:43.10-05:00\nday: 2002-12-14\n",
    "bin: !!binary aGVsbG8=\nforced: !!str 123\n"
    "keys: {1: one, 2.5: two, true: three, null: four}\n",
    "merged: {<<: {a: 1, b: 2}, b: 3}\nlist: [[1, [2, [3]]], {x: {y: {z: []}}}]\nempty: {}\n",
    "set: !!set {a, b}\nomap: !!omap [{a: 1}, {b: 2}]\npairs: !!pairs [{a: 1}]\n",
    "? [complex, key]\n: value\n",
    "dup: 1\ndup: 2\nurl: http://example.com:80/a*b\n",
    "- a\n- - b\n  - c\n- {d: e}\n",
    "just a scalar\n",
    "bad: !!int twelve\n",
    "bad: !unknown x\n",
    "bad: !!timestamp 2001-99-99\n",
]


@pytest.mark.parametrize("text", SHAPES)
def test_documents_are_built_as_pyyaml_builds_them(text: str) -> None:
    """The store builds plain documents itself (faster than PyYAML's constructor): the
    data, its types and the errors must be PyYAML's own."""
    import math

    import yaml

    from gw.store.manifests import load_documents

    def typed(value: object) -> object:
        if isinstance(value, dict):
            return {typed(k): typed(v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set)):
            return (type(value).__name__, [typed(v) for v in value])
        if isinstance(value, float) and math.isnan(value):
            return ("float", "nan")
        return (type(value).__name__, value)

    try:
        expected = [typed(d) for d in yaml.load_all(text, Loader=yaml.CSafeLoader)]
    except Exception as exc:  # PyYAML lets a constructor's ValueError through, too
        with pytest.raises(type(exc)) as raised:
            load_documents(Path("a.yaml"), text, Limits())
        assert str(raised.value) == str(exc)
        return
    got = [typed(d.data) for d in load_documents(Path("a.yaml"), text, Limits())]
    assert got == expected


def test_a_document_nested_to_the_limit_is_read_one_level_more_is_not(tmp_path: Path) -> None:
    """The depth told from a document's characters and the depth walked agree at the limit."""
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(limits="maxNestingDepth: 8"))
    # The document, `spec`, `static`, `hosts`, a host: 5 levels; `x` adds 3 (`at`), 4 (`over`).
    (tmp_path / "at.yaml").write_text(
        US.format(name="at").replace("port: 80}", "port: 80, x: [[[1]]]}")
    )
    (tmp_path / "over.yaml").write_text(
        US.format(name="over").replace("port: 80}", "port: 80, x: [[[[1]]]]}")
    )
    snapshot = DirectoryStore(tmp_path).scan()
    by_key = {e.key: e.message for e in snapshot.errors}
    assert (
        upstream("over") in by_key and "nested more than 8 levels deep" in by_key[upstream("over")]
    )
    assert by_key[upstream("at")] == "spec.static.hosts[0].x: unknown field"  # not its depth
