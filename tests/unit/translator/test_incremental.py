"""Incremental translation gives exactly what a full translation gives.

Random edit sequences over the golden inputs: each golden case's documents are written to
a folder one file each, then edited step by step (a value changed, a field dropped, a
document broken, removed or brought back). Each step is read by the store (which hands
over only what changed), passed through discovery, and translated twice: with the previous
step's cache (the incremental path) and without any (from scratch), both given the same
last accepted contributions. Every output must be identical: the xDS of every proxy byte
for byte, the Proxy IR, the statuses, what the extauth and rate-limit servers are served,
the references and the contributions kept for the next translation.
"""

from __future__ import annotations

import copy
import logging
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gw.discovery import ServiceDiscovery
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.translator.translation import Result, translate
from tests.golden.test_golden import ALL_CASES, GOLDEN_NOW, case_id, options_for

YEAR = 365 * 86_400.0
#: The goldens' certificates expire in 2036, ten years after the goldens' now.
YEARS = (0, 1, 20)
ACTIONS = ("change", "change", "change", "drop", "break", "remove", "restore")


def identical(warm: Result, cold: Result) -> None:
    """Every output of the two translations is the same."""
    assert warm.statuses == cold.statuses
    assert warm.proxy_statuses == cold.proxy_statuses
    assert warm.proxies == cold.proxies
    assert list(warm.served) == list(cold.served)
    for role, xds in cold.served.items():
        same_xds(warm.served[role].resources, xds.resources)
    same_xds(warm.extauth.resources, cold.extauth.resources)
    same_xds(warm.ratelimit.resources, cold.ratelimit.resources)
    assert tuple(warm.references) == tuple(cold.references)
    assert dict(warm.accepted) == dict(cold.accepted)
    assert warm.declared == cold.declared


def restated_covers_changes(last: Result, warm: Result) -> None:
    """The statuses that differ from the last translation's are among those it says it
    redid (the status book compares only those)."""
    if warm.restated is None:
        return
    differ = {
        key
        for key in last.statuses.keys() | warm.statuses.keys()
        if last.statuses.get(key) != warm.statuses.get(key)
    }
    assert differ <= warm.restated, sorted(differ - warm.restated)


def same_xds(one: Any, two: Any) -> None:
    assert list(one) == list(two)
    for type_url, resources in two.items():
        assert list(one[type_url]) == list(resources), type_url
        for name, message in resources.items():
            assert one[type_url][name].SerializeToString(deterministic=True) == (
                message.SerializeToString(deterministic=True)
            ), name


def documents(case: Path) -> list[Any]:
    """The case's documents: data, or the raw text of one that does not parse."""
    out: list[Any] = []
    for chunk in re.split(r"(?m)^---[ \t]*$", case.read_text()):
        try:
            data = yaml.safe_load(chunk)
        except yaml.YAMLError:
            out.append(chunk)
            continue
        if data is not None:
            out.append(data)
    return out


def leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every value inside a document (mappings and lists included)."""
    out = [path] if path else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += leaves(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += leaves(value, (*path, i))
    return out


def changed(value: Any, pick: int) -> Any:
    """Another value of about the same shape (so that most edits still parse)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1 + pick % 3
    if isinstance(value, str):
        return [value + "x", value.upper(), "", value[: len(value) // 2]][pick % 4]
    if isinstance(value, list):
        return value[:-1] if value else value
    if isinstance(value, dict):
        return dict(list(value.items())[:-1]) if value else value
    return value


def edit(docs: list[Any], originals: list[Any], draw: Any) -> None:
    """One random edit of one document: change or drop a value, break it, remove it or
    bring back its original."""
    i = draw(st.integers(0, len(docs) - 1))
    action = draw(st.sampled_from(ACTIONS))
    if action == "remove":
        docs[i] = None
    elif action == "restore" or docs[i] is None:
        docs[i] = copy.deepcopy(originals[i])
    elif action == "break":
        docs[i] = "kind: [unclosed"
    elif isinstance(docs[i], dict):
        paths = leaves(docs[i])
        if not paths:
            return
        path = draw(st.sampled_from(paths))
        parent = docs[i]
        for part in path[:-1]:
            parent = parent[part]
        if action == "drop" and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = changed(parent[path[-1]], draw(st.integers(0, 11)))


def write(folder: Path, docs: list[Any]) -> None:
    """Each document in a file of its own; only the files whose text changes are written
    (the others keep their resources, the very objects a cache may reuse)."""
    for i, doc in enumerate(docs):
        path = folder / f"doc-{i:03d}.yaml"
        if doc is None:
            path.unlink(missing_ok=True)
            continue
        text = doc if isinstance(doc, str) else yaml.safe_dump(doc)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            # A new modification time even within the file system's time resolution.
            stamp = time.time_ns() + 10**9 * (i + 1)
            os.utime(path, ns=(stamp, stamp))


@pytest.mark.parametrize("case", ALL_CASES, ids=case_id)
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_incremental_translation_equals_full_translation(case: Path, data: st.DataObject) -> None:
    logging.getLogger("gw.store").setLevel(logging.ERROR)  # broken files are the point
    originals = documents(case)
    if not originals:
        return
    docs = copy.deepcopy(originals)
    options = options_for(case)
    # Listeners served in shards too (`envoy/shards.py`), whenever their domains allow.
    if data.draw(st.booleans(), label="shard every listener that can be"):
        options = Options(**{**_fields(options), "shard_routes_from": 1})
    folder = Path(tempfile.mkdtemp(prefix="gw-incremental-"))
    try:
        write(folder, docs)
        store, discovery = DirectoryStore(folder), ServiceDiscovery(Options().namespace)
        last: Result | None = None
        for step in range(data.draw(st.integers(2, 6), label="steps")):
            if step and data.draw(st.booleans(), label="edit (else only the time moves)"):
                edit(docs, originals, data.draw)
                write(folder, docs)
            # The time moves too, back and forth: certificates expire and are valid again.
            years = data.draw(st.sampled_from(YEARS), label="years from now") if step else 0
            at = Options(**{**_fields(options), "now": GOLDEN_NOW + years * YEAR})
            snapshot = discovery(store.scan())
            previous = last.accepted if last is not None else None
            warm = translate(snapshot, at, previous, cache=last.cache if last else None)
            cold = translate(snapshot, at, previous)
            identical(warm, cold)
            if last is not None:
                restated_covers_changes(last, warm)
            last = warm
    finally:
        shutil.rmtree(folder)


def _fields(options: Options) -> dict[str, Any]:
    return {name: getattr(options, name) for name in options.__dataclass_fields__}
