"""The line of a field in a manifest: `spec.virtualHost.routes[1].matchers[0]` of document 2
of a file's text → the 1-based line where that matcher starts.

Documents are numbered as the store numbers them (1-based, as YAML yields them, empty ones
counted). Items of a `kind: List` document are not told apart (the document's line is given).
A field that cannot be followed to its end (the file changed since it was read) gives the
line of the deepest part found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import yaml

from gw.explain.served import Locate

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_line(text: str, document: int, field: str) -> int | None:
    return document_field_line(documents(text), document, field)


def documents(text: str) -> list[yaml.Node | None]:
    """A file's documents as YAML nodes, which know their lines ([] when it does not
    parse). Composed once per file: composing it again for each field made explaining a
    file of hundreds of resources take minutes."""
    try:
        return list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return []


def document_field_line(nodes: list[yaml.Node | None], document: int, field: str) -> int | None:
    found = nodes[document - 1] if 1 <= document <= len(nodes) else None
    if found is None:
        return None
    node: yaml.Node = found
    for name, index in _TOKEN.findall(field):
        child = _child(node, name, int(index) if index else None)
        if child is None:
            break
        node = child
    return int(node.start_mark.line) + 1


def _child(node: yaml.Node, name: str, index: int | None) -> yaml.Node | None:
    if index is not None:
        if isinstance(node, yaml.SequenceNode) and index < len(node.value):
            found: yaml.Node = node.value[index]
            return found
        return None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == name:
                found = value
                return found
    return None


def locator(inputs: Iterable[Mapping[str, Any]], read: Callable[[str], str | None]) -> Locate:
    """Where each field of the resources read was written: `inputs` are the admin API's
    (`/statuses` `inputs`: kind, namespace, name, file, document), `read(file)` the text of a
    file of the served folder (None when it cannot be read, or there are no files: the line
    is then unknown). Each file is read and composed once, when first needed."""
    where = {
        (i["kind"], i["namespace"], i["name"]): (i.get("file"), i.get("document")) for i in inputs
    }
    composed: dict[str, list[yaml.Node | None] | None] = {}

    def locate(kind: str, namespace: str, name: str, field: str) -> tuple[str, int | None] | None:
        file, document = where.get((kind, namespace, name), (None, None))
        if not file:
            return None
        if not document:
            return str(file), None
        if file not in composed:
            text = read(str(file))
            composed[file] = documents(text) if text is not None else None
        nodes = composed[file]
        return str(file), document_field_line(
            nodes, int(document), field
        ) if nodes is not None else None

    return locate
