"""Editing the manifests of a served folder in place: how `gwctl apply` and `gwctl delete`
change a folder install.

A resource stays where the user keeps it: applying a resource that lives in document 3 of
`routes.yaml` replaces that document (the file's other documents and their comments stay
byte for byte); deleting it removes that document (and the file when nothing else is left).
A new resource gets a file of its own under `gwctl-created/`, where `gwctl create` puts
resources too. Every write goes to a temporary file in the same folder that then replaces
the old one, so the control plane never reads half a file; the result is parsed before it
is written, and an edit that would not give back exactly the intended documents is refused.

Documents are numbered as the store numbers them (1-based, as YAML yields them, empty ones
counted), which is what the admin API reports as a resource's `document`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

CREATED_DIR = "gwctl-created"
_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$")


class EditError(Exception):
    """The edit cannot be made safely; the message says why and what to do instead."""


def split_documents(text: str) -> tuple[str, list[str]]:
    """(what comes before the first document, each document's text with its `---` line).

    A text before the first `---` is a document when it holds more than comments."""
    chunks: list[list[str]] = [[]]
    for line in text.splitlines(keepends=True):
        if _SEPARATOR.match(line.rstrip("\r\n")):
            chunks.append([])
        chunks[-1].append(line)
    pieces = ["".join(c) for c in chunks]
    head, rest = pieces[0], pieces[1:]
    if _has_content(head):
        return "", [head, *rest]
    return head, rest


def _has_content(text: str) -> bool:
    return any(
        line.strip() and not line.lstrip().startswith("#") and line.strip() != "..."
        for line in text.splitlines()
    )


def document_body(text: str) -> str:
    """A document's text without its `---` line, ending with a newline."""
    lines = text.splitlines(keepends=True)
    if lines and _SEPARATOR.match(lines[0].rstrip("\r\n")):
        lines = lines[1:]
    body = "".join(lines)
    return body if body.endswith("\n") else body + "\n"


def replace_document(
    text: str, number: int, new: str | None, *, keep_comments: bool = False
) -> str | None:
    """`text` with document `number` replaced by `new` (removed when None); None when no
    document is left. With `keep_comments`, a `new` that starts with no comment keeps the
    comment lines the old document started with (a command that changed part of it). Raises
    EditError when `text` has no such document, or when the edited text would not parse back
    to the intended documents."""
    head, documents = split_documents(text)
    if not 1 <= number <= len(documents):
        raise EditError(f"the file has {len(documents)} documents, not {number}")
    expected = _load(text)
    if new is None:
        del documents[number - 1]
        del expected[number - 1]
    else:
        old = documents[number - 1].splitlines(keepends=True)
        separator = old[0] if old and _SEPARATOR.match(old[0].rstrip("\r\n")) else ""
        body = document_body(new)
        if keep_comments and not _leading_comments(body).strip():
            body = _leading_comments(document_body(documents[number - 1])) + body
        documents[number - 1] = _terminated(separator) + body if separator else body
        expected[number - 1] = yaml.safe_load(new)
    if not any(_has_content(d) or d.strip() for d in documents):
        return None
    out = head + "".join(_terminated(d) for d in documents)
    if _load(out) != expected:
        raise EditError("the file's layout is too unusual to edit one document of it safely")
    return out


def _leading_comments(body: str) -> str:
    """The comment and blank lines a document's body starts with."""
    out = []
    for line in body.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        out.append(line)
    return "".join(out)


def _terminated(document: str) -> str:
    return document if document.endswith("\n") else document + "\n"


def _load(text: str) -> list[Any]:
    try:
        return list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise EditError(f"the file does not parse as YAML ({exc})") from None


def check_document(path: Path, number: int, key: tuple[str, str, str]) -> None:
    """Refuse to edit document `number` of `path` unless it is the resource `key` alone (a
    `kind: List` holds others too), or a broken document that meant it."""
    documents = _load(_read(path))
    if not 1 <= number <= len(documents):
        raise EditError(f"{path} has no document {number} any more; edit it by hand")
    doc = documents[number - 1]
    if isinstance(doc, dict) and doc.get("kind") == "List":
        raise EditError(
            f"it is an item of a List (document {number} of {path}) with other resources; "
            "edit that file instead"
        )
    if isinstance(doc, dict) and doc.get("kind") not in (None, key[0]):
        raise EditError(f"document {number} of {path} is a {doc.get('kind')} now; try again")


def stored_document(path: Path, number: int, key: tuple[str, str, str]) -> dict[str, Any]:
    """Document `number` of `path`, which holds the resource `key` (see check_document)."""
    check_document(path, number, key)
    document = _load(_read(path))[number - 1]
    if not isinstance(document, dict):
        raise EditError(f"document {number} of {path} is not a mapping; fix it by hand")
    return document


def new_file(folder: Path, kind: str, namespace: str, name: str) -> Path:
    return folder / CREATED_DIR / f"{kind.lower()}-{namespace}-{name}.yaml"


def write_atomically(path: Path, text: str, *, private: bool = False) -> None:
    """Write aside, then move into place. A file holding a secret is never readable by
    others, not even for a moment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.gwctl-tmp"
    mode = 0o600 if private else 0o644
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)
    temp.replace(path)


def remove_document(path: Path, number: int) -> None:
    """Remove document `number` of `path`; the file goes when nothing is left in it."""
    remaining = replace_document(_read(path), number, None)
    if remaining is None:
        path.unlink()
    else:
        write_atomically(path, remaining, private=_private(path))


def put_document(
    path: Path, number: int | None, text: str, *, private: bool, keep_comments: bool = False
) -> None:
    """Write `text` as document `number` of `path`, or as the whole file when None."""
    if number is None or not path.exists():
        write_atomically(path, document_body(text), private=private)
        return
    updated = replace_document(_read(path), number, text, keep_comments=keep_comments)
    assert updated is not None
    write_atomically(path, updated, private=private or _private(path))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EditError(f"cannot read {path}: {exc}") from None


def _private(path: Path) -> bool:
    return not path.stat().st_mode & 0o044


def read_manifests(paths: Sequence[Path]) -> list[tuple[Path, int, str, dict[str, Any]]]:
    """(file, document number, document text, data) of every non-empty document in `paths`
    (a folder's manifests recursively, hidden files skipped); `kind: List` is unpacked."""
    from gw.store.directory import MANIFEST_SUFFIXES

    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and p.name.endswith(MANIFEST_SUFFIXES)
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            files.append(path)
    out = []
    for file in files:
        text = _read(file)
        if file.suffix == ".json":
            out += _documents_of([yaml.safe_load(text)], file, [])
            continue
        _, chunks = split_documents(text)
        try:
            data = list(yaml.safe_load_all(text))
        except yaml.YAMLError as exc:
            raise EditError(f"{file}: not valid YAML ({exc})") from None
        out += _documents_of(data, file, chunks)
    return out


def _documents_of(
    data: list[Any], file: Path, chunks: list[str]
) -> list[tuple[Path, int, str, dict[str, Any]]]:
    out = []
    for number, doc in enumerate(data, start=1):
        if doc is None:
            continue
        items = doc["items"] if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for item in items:
            if not isinstance(item, dict):
                raise EditError(f"{file}, document {number}: a manifest must be a mapping")
            own = len(items) == 1 and len(chunks) == len(data)
            text = document_body(chunks[number - 1]) if own else yaml.safe_dump(item)
            out.append((file, number, text, item))
    return out
