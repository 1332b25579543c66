"""Reading one manifest file into documents, within what Settings say a file may cost.

A manifest is input from whoever can write to the folder, and reading it must never stall
or crash the control plane. Settings `directoryConfigSource` bounds each file:

- `maxFileBytes`: a larger file is refused before it is read;
- `maxDocuments`: documents in the file (`kind: List` items count one each);
- `maxAliasExpansions`: what the YAML aliases of one document add once expanded (an alias
  bomb is a few lines that expand to billions of values when validated or printed);
- `maxNestingDepth`: mappings and lists nested in one document.

A file beyond the first two limits is refused whole (`TooCostly`); a document beyond the
last two is refused alone (`Document.refusal`), like a document with an unknown field.
Aliases are counted on the parsed YAML nodes, before anything expands them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gw.api.settings import DirectoryConfigSource

Limits = DirectoryConfigSource

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Resolved tags of short plain scalars, shared by every file read (bounded).
_RESOLVED: dict[tuple[Any, str | None, Any], str] = {}
#: Enough for the keys and the values that repeat, which the first files read hold; values
#: met once (host names) would only fill it.
_RESOLVED_MAX = 10_000


class _Loader(_BaseLoader):  # type: ignore[misc]
    """The safe loader, remembering what tag a scalar's text resolves to: PyYAML runs its
    implicit resolvers' regular expressions in Python for every scalar of every file, and
    manifests repeat the same keys and values (a fifth of reading a large folder)."""

    def resolve(self, kind: Any, value: str | None, implicit: Any) -> str:
        key = (kind, value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX and (value is None or len(value) <= 64):
                _RESOLVED[key] = tag
        return tag


#: Where a limit is set, as messages name it.
SETTING = "Settings spec.directoryConfigSource"
#: A scalar counts as one value per started KiB when its alias is expanded.
SCALAR_UNIT = 1024


class TooCostly(Exception):
    """The file is beyond a limit: refused whole."""


@dataclass(frozen=True, slots=True)
class Document:
    """A document's data, and why it is refused when it is beyond a limit (`refusal`).
    `digest` fingerprints a YAML document's text: a document whose text is what it was
    (`unchanged`) is not constructed again (its data is None), so that the store keeps the
    resource it made of it last time."""

    number: int
    data: Any
    refusal: str | None = None
    digest: bytes = b""
    unchanged: bool = False


def read_text(path: Path, limits: Limits) -> str:
    """The file as text, read only if it is within `maxFileBytes` (a file growing while it
    is read is cut there and refused). Raises `TooCostly`, OSError, UnicodeDecodeError."""
    with path.open("rb") as file:
        data = file.read(limits.max_file_bytes + 1)
    if len(data) > limits.max_file_bytes:
        raise TooCostly(_size_refusal(path.stat().st_size, limits))
    return data.decode("utf-8")


def size_refusal(size: int, limits: Limits) -> str | None:
    """Why a file of `size` bytes is not read, or None when it may be."""
    return _size_refusal(size, limits) if size > limits.max_file_bytes else None


def _size_refusal(size: int, limits: Limits) -> str:
    return (
        f"the file has {size:,} bytes, more than the {limits.max_file_bytes:,} a manifest "
        f"file may have ({SETTING}.maxFileBytes); split it into several files or raise the limit"
    )


def load_documents(
    path: Path, text: str, limits: Limits, known: Mapping[int, bytes] | None = None
) -> list[Document]:
    """Every non-empty document of the file, numbered from 1; a `kind: List`'s items share
    the List's number. `known`: the digests of the documents as last read, by number (a
    YAML document with the same text is `unchanged`). Raises `TooCostly` and the parsers'
    errors (`yaml.YAMLError`, `json.JSONDecodeError`)."""
    if path.suffix == ".json":
        raw = _json_documents(text, limits)
    else:
        raw = _yaml_documents(text, limits, known or {})
    out: list[Document] = []
    for doc in raw:
        data = doc.data
        if doc.unchanged:
            out.append(doc)
        elif doc.refusal is None and _is_list(data):
            out.extend(Document(doc.number, item) for item in data["items"])
        elif data is not None or doc.refusal is not None:
            out.append(doc)
    if len(out) > limits.max_documents:
        raise TooCostly(_count_refusal(limits))
    return out


def _is_list(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and data.get("kind") == "List"
        and isinstance(data.get("items"), list)
    )


def _count_refusal(limits: Limits) -> str:
    return (
        f"the file holds more than {limits.max_documents:,} documents ({SETTING}.maxDocuments); "
        "split it into several files or raise the limit"
    )


def _yaml_documents(text: str, limits: Limits, known: Mapping[int, bytes]) -> list[Document]:
    loader = _Loader(text)
    out: list[Document] = []
    try:
        while loader.check_node():
            if len(out) >= limits.max_documents:
                raise TooCostly(_count_refusal(limits))
            node = loader.get_node()
            number = len(out) + 1
            span = text[node.start_mark.index : node.end_mark.index]
            digest = hashlib.blake2b(span.encode(), digest_size=16).digest()
            if known.get(number) == digest:
                out.append(Document(number, None, digest=digest, unchanged=True))
                continue
            refusal = (
                None
                if _plainly_within(span, limits)
                else _refusal(node, _node_children, _node_weight, limits, aliases=True)
            )
            # A refused document is still constructed (cheaply: aliases stay shared) so
            # that the resource it names can be reported; nothing expands it.
            data = _constructed(loader, node) if refusal is None and "*" not in span else None
            if data is None:
                data = loader.construct_document(node)
            out.append(Document(number, data, refusal, digest))
    finally:
        loader.dispose()
    return out


#: The characters that open a YAML mapping or list: block (`key:`, `? key`, `- item`) and
#: flow (`{`, `[`). Every mapping or list of a document starts at one of its own.
_OPENERS = (":", "?", "-", "{", "[")


def _plainly_within(span: str, limits: Limits) -> bool:
    """True when one YAML document's text (`span`, its first to its last character) cannot
    be beyond the depth and alias limits, which a look at its characters tells for nearly
    every real manifest at a fraction of what walking its nodes (`_refusal`) costs.

    Without a `*` there is no alias (nothing expands, nothing recurses); and a document
    cannot nest more mappings and lists than its text has characters that open one. The
    count is generous (a `:` in a URL counts), so a document it doubts is walked."""
    if "*" in span:
        return False
    return sum(span.count(c) for c in _OPENERS) <= limits.max_nesting_depth


def _json_documents(text: str, limits: Limits) -> list[Document]:
    if not text.strip():
        return []
    try:
        data = json.loads(text)
    except RecursionError:
        raise TooCostly(_depth_refusal(limits)) from None
    docs = data if isinstance(data, list) else [data]
    if len(docs) > limits.max_documents:
        raise TooCostly(_count_refusal(limits))
    return [
        Document(n, doc, _refusal(doc, _data_children, _unit, limits, aliases=False))
        for n, doc in enumerate(docs, start=1)
    ]


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
#: Scalar tags whose PyYAML constructor is a plain function of the node.
_SCALARS = frozenset(_TAG + t for t in ("null", "bool", "int", "float", "timestamp", "binary"))


class _General(Exception):
    """The document needs PyYAML's general construction."""


def _constructed(loader: Any, node: Any) -> Any:
    """An alias-free document within the depth limit, built as PyYAML's safe constructor
    builds it but without its per-node machinery (half of reading a large folder); None
    when the document has anything else (a merge key, a collection as a key, a tag of its
    own) or a value PyYAML refuses: then the general construction builds it (or says why
    it cannot, with the same error as ever)."""
    try:
        return _build(loader, node)
    except Exception:
        return None


def _build(loader: Any, node: Any) -> Any:
    tag, kind = node.tag, type(node)
    if kind is yaml.ScalarNode:
        if tag == _STR:  # short texts (names, kinds, namespaces) shared, not copied
            return sys.intern(node.value) if len(node.value) <= 64 else node.value
        if tag in _SCALARS:
            return loader.yaml_constructors[tag](loader, node)
    elif kind is yaml.MappingNode and tag == _MAP:
        out = {}
        for key, value in node.value:
            if type(key) is not yaml.ScalarNode or key.tag not in _KEYS:
                raise _General
            out[_build(loader, key)] = _build(loader, value)
        return out
    elif kind is yaml.SequenceNode and tag == _SEQ:
        return [_build(loader, item) for item in node.value]
    raise _General


#: The tags a mapping's key may have here (not `<<` merges, not `=` values).
_KEYS = _SCALARS | {_STR}


def _depth_refusal(limits: Limits) -> str:
    return f"nested more than {limits.max_nesting_depth} levels deep ({SETTING}.maxNestingDepth)"


Children = Callable[[Any], Sequence[Any] | None]


def _refusal(
    root: Any, children: Children, weight: Callable[[Any], int], limits: Limits, *, aliases: bool
) -> str | None:
    """Why a document (YAML node graph or JSON data) is beyond the depth or alias limits.

    Walks the document once without recursion, each shared (aliased) node once: a node's
    expanded size and depth are remembered, so a bomb costs what its text costs."""
    if children(root) is None:
        return None
    expanded: dict[int, tuple[int, int]] = {}  # id → (expanded size, depth)
    distinct = 0
    frames: list[list[Any]] = [[root, children(root), 0, 1, 0]]  # node, kids, next, size, depth
    on_path = {id(root)}
    while frames:
        frame = frames[-1]
        node, kids, index = frame[0], frame[1], frame[2]
        if index == len(kids):
            frames.pop()
            on_path.discard(id(node))
            distinct += 1
            expanded[id(node)] = (frame[3], frame[4] + 1)
            if frames:
                _add(frames[-1], *expanded[id(node)])
            continue
        frame[2] += 1
        kid = kids[index]
        grandkids = children(kid)
        if grandkids is None:
            frame[3] += weight(kid)
            distinct += 0 if id(kid) in expanded else weight(kid)
            if aliases:
                expanded.setdefault(id(kid), (weight(kid), 0))
            continue
        known = expanded.get(id(kid))
        if id(kid) in on_path:
            return "an alias refers to a value that contains it (a recursive document)"
        if known is not None:
            if len(frames) + known[1] > limits.max_nesting_depth:
                return _depth_refusal(limits)
            _add(frame, *known)
            continue
        if len(frames) + 1 > limits.max_nesting_depth:
            return _depth_refusal(limits)
        on_path.add(id(kid))
        frames.append([kid, grandkids, 0, 1, 0])
    size = expanded[id(root)][0]
    if aliases and size - distinct > limits.max_alias_expansions:
        return (
            f"its aliases expand to {size - distinct:,} more values, more than "
            f"{limits.max_alias_expansions:,} ({SETTING}.maxAliasExpansions); "
            "write the values out or raise the limit"
        )
    return None


def _add(frame: list[Any], size: int, depth: int) -> None:
    frame[3] += size
    frame[4] = max(frame[4], depth)


def _node_children(node: Any) -> Sequence[Any] | None:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return None


def _node_weight(node: Any) -> int:
    return 1 + len(node.value) // SCALAR_UNIT if isinstance(node, yaml.ScalarNode) else 1


def _data_children(data: Any) -> Sequence[Any] | None:
    if isinstance(data, dict):
        return list(data.values())
    if isinstance(data, list):
        return data
    return None


def _unit(_: Any) -> int:
    return 1
