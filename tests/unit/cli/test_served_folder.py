"""Editing one document of a manifest file in place (`gwctl apply` and `delete` in a folder
install): the other documents, their comments and separators stay byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from gw.cli.served_folder import (
    EditError,
    check_document,
    put_document,
    remove_document,
    replace_document,
    split_documents,
)

FILE = """# shared header
---
kind: Upstream
metadata: {name: a}
---   # the second
# about b
kind: Upstream
metadata: {name: b}
"""


def test_documents_are_counted_as_the_store_counts_them() -> None:
    head, docs = split_documents(FILE)
    assert head == "# shared header\n"
    assert len(docs) == 2
    head, docs = split_documents("kind: A\n---\nkind: B\n")
    assert (head, len(docs)) == ("", 2)


def test_replace_keeps_everything_else() -> None:
    out = replace_document(FILE, 2, "kind: Upstream\nmetadata: {name: b, namespace: x}\n")
    assert out == FILE.replace(
        "# about b\nkind: Upstream\nmetadata: {name: b}",
        ("kind: Upstream\nmetadata: {name: b, namespace: x}"),
    )
    out = replace_document(FILE, 1, "kind: Upstream\nmetadata: {name: a2}\n")
    assert out is not None and out.endswith("# about b\nkind: Upstream\nmetadata: {name: b}\n")


def test_a_partial_change_keeps_the_documents_comment() -> None:
    """`gwctl add route` and the like rewrite a document they changed part of: its leading
    comment stays unless the new text brings one (`gwctl apply` replaces it as given)."""
    new = "kind: Upstream\nmetadata: {name: b, namespace: x}\n"
    out = replace_document(FILE, 2, new, keep_comments=True)
    assert out == FILE.replace("metadata: {name: b}", "metadata: {name: b, namespace: x}")
    out = replace_document(FILE, 2, "# new\n" + new, keep_comments=True)
    assert out is not None and "# about b" not in out and "# new\n" in out
    out = replace_document("kind: Upstream\nmetadata: {name: a}\n", 1, new, keep_comments=True)
    assert out == new


def test_remove_and_the_last_one_goes_with_its_file(tmp_path: Path) -> None:
    assert replace_document(FILE, 1, None) == "# shared header\n---   # the second\n# about b\n" + (
        "kind: Upstream\nmetadata: {name: b}\n"
    )
    path = tmp_path / "one.yaml"
    path.write_text("kind: Upstream\nmetadata: {name: a}\n")
    remove_document(path, 1)
    assert not path.exists()
    with pytest.raises(EditError, match="the file has 2 documents, not 3"):
        replace_document(FILE, 3, None)


def test_a_secret_is_never_readable_by_others(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    put_document(path, None, "kind: Secret\n", private=True)
    assert path.stat().st_mode & 0o077 == 0


def test_lists_and_changed_documents_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("kind: List\nitems:\n- {kind: Upstream, metadata: {name: a}}\n")
    with pytest.raises(EditError, match="it is an item of a List"):
        check_document(path, 1, ("Upstream", "default", "a"))
    path.write_text("kind: RouteTable\n")
    with pytest.raises(EditError, match="is a RouteTable now"):
        check_document(path, 1, ("Upstream", "default", "a"))
