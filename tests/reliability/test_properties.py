"""Property tests: random and malformed manifests never crash the store or the translator,
every resource gets a status, and whatever is served is configuration Envoy accepts.

The manifests are the golden inputs (tests/golden/cases, which between them use every
field gw knows) mutated by hypothesis: a value replaced by a random or hostile one (domains,
regexes, durations, URLs, header names, PEM text, ports, references) or by a value taken
from elsewhere in the case (a name, namespace or port in the wrong place), a key deleted, a
list item repeated; and random text as a file. Each mutated folder is
translated twice: fresh, and after the unmutated case was accepted (so last-accepted
fallback and the translation cache are exercised too). A bounded sample of the outputs goes
through `envoy --mode validate` (the check Envoy applies to what arrives over xDS: a
refusal there is a NACK on a live proxy).

Deterministic in CI: `derandomize=True`, bounded `max_examples`, no deadline.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gw.api import STATUSLESS_KINDS
from gw.discovery import ServiceDiscovery
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.translator.translation import Result, translate
from tests.golden.test_golden import CASES, GOLDEN_NOW
from tests.support.envoy_validate import envoy_refusal

OPTIONS = Options(now=GOLDEN_NOW)


def _load(case: Path) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(case.read_text()) if d is not None]
    except yaml.YAMLError:
        return []  # manifest-invalid-yaml: its point is not to parse


INPUTS = {c.name[: -len(".in.yaml")]: _load(c) for c in sorted(CASES.glob("*.in.yaml"))}
INPUTS = {name: docs for name, docs in INPUTS.items() if docs}

HOSTILE = [
    "",
    " ",
    "*",
    "*.",
    ".",
    "..",
    "a..b",
    "-a.test",
    "a_b.test",
    "*.*.test",
    "ex*mple.test",
    "xn--",
    "a" * 300,
    "é.test",
    "a.test:99999",
    "[::1]:80",
    "::1",
    "127.0.0.1",
    "0.0.0.0",
    "/",
    "//",
    "/a/../b",
    "a/b",
    "/%2e%2e/",
    "/\x00",
    "/a b",
    "(",
    ")",
    "[",
    "(?P<x>a)",
    "(a*)*b",
    "a{1001}",
    "\\",
    "\\d",
    "(?=a)",
    "\\p{Greek}",
    "^$",
    "[z-a]",
    "1s",
    "0s",
    "-1s",
    "1.5s",
    "1e9s",
    "99999999999h",
    "200",
    "ms",
    "1h1m",
    "0.000000001s",
    "http://",
    "http://127.0.0.1:1/x",
    "https://[::1]/jwks",
    "ftp://x",
    "http://a b/",
    "{{ x }}",
    "{{",
    "}}",
    '{{ header("a") }}',
    "%REQ(x)%",
    "%",
    "%%",
    ":authority",
    "host",
    "Host",
    "x_y",
    "X-UPPER",
    "content-length",
    "transfer-encoding",
    "te",
    "connection",
    "x-envoy-original-path",
    "a\nb",
    "a\r\nb: c",
    "\t",
    "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----",
    "true",
    "null",
    "0",
    "-1",
    "gw-system",
    "default",
    "kube-system",
    "GET",
    "get",
    "BREW",
]
STRINGS = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=24))
INTEGERS = st.one_of(
    st.sampled_from([0, -1, 1, 65535, 65536, 2**31, 2**63, -(2**63), 10**30]),
    st.integers(-1000, 100_000),
)
SCALARS = st.one_of(STRINGS, INTEGERS, st.booleans(), st.none(), st.floats(allow_nan=True))
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(STRINGS, SCALARS, max_size=3),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every position in a document (the root excluded)."""
    out: list[tuple[Any, ...]] = []
    items: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        items = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    for key, child in items:
        out.append((*prefix, key))
        out.extend(_paths(child, (*prefix, key)))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@st.composite
def mutated_case(draw: st.DrawFn) -> tuple[str, list[Any], list[Any]]:
    """(case name, its documents, the documents mutated 1 to 4 times)."""
    name = draw(st.sampled_from(sorted(INPUTS)))
    docs = copy.deepcopy(INPUTS[name])
    for _ in range(draw(st.integers(1, 4))):
        paths = [(i, *p) for i, doc in enumerate(docs) for p in _paths(doc)]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(docs, path)
        key = path[-1]
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "repeat"]))
        if action == "delete":
            del parent[key]
        elif action == "repeat" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
        else:
            # Half the time a value from elsewhere in the case: names, namespaces and ports
            # swapped between fields make references to resources that exist, of the wrong
            # kind or namespace, or to themselves.
            own = _strings(INPUTS[name])
            parent[key] = draw(st.one_of(VALUES, st.sampled_from(own)) if own else VALUES)
    return name, INPUTS[name], docs


def _strings(node: Any) -> list[Any]:
    """The scalar values in a document tree (strings and numbers), sorted and unique."""
    if isinstance(node, dict):
        return sorted({v for child in node.values() for v in _strings(child)}, key=repr)
    if isinstance(node, list):
        return sorted({v for child in node for v in _strings(child)}, key=repr)
    return [node] if isinstance(node, str | int) and not isinstance(node, bool) else []


def _translate_folder(folder: Path, previous: Result | None = None) -> tuple[Snapshot, Result]:
    stored = DirectoryStore(folder).scan()
    snapshot = ServiceDiscovery(OPTIONS.namespace)(stored)
    if previous is None:
        return snapshot, translate(snapshot, OPTIONS)
    return snapshot, translate(snapshot, OPTIONS, previous.accepted, cache=previous.cache)


def _write(folder: Path, docs: list[Any]) -> None:
    (folder / "case.yaml").write_text(yaml.safe_dump_all(docs, allow_unicode=True))


def assert_every_resource_has_a_status(snapshot: Snapshot, result: Result) -> None:
    wanted = {k for k in snapshot.resources if k.kind not in STATUSLESS_KINDS}
    wanted |= {e.key for e in snapshot.errors if e.key and e.key.kind not in STATUSLESS_KINDS}
    assert wanted <= set(result.statuses), wanted - set(result.statuses)
    for error in snapshot.errors:
        if error.key is None or error.key.kind in STATUSLESS_KINDS:
            continue
        status = result.statuses[error.key]
        assert error.message in status.reason, (error, status.reason)
        if error.key in snapshot.resources:  # a second copy of a resource read elsewhere
            assert status.state != "Accepted", error
        else:
            assert status.state == "Rejected", error


def translate_mutation(case: list[Any], mutated: list[Any]) -> list[Result]:
    """The mutated documents translated fresh and after the case was accepted."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write(folder, case)
        _, accepted = _translate_folder(folder)
        _write(folder, mutated)
        results = []
        for previous in (None, accepted):
            snapshot, result = _translate_folder(folder, previous)
            assert_every_resource_has_a_status(snapshot, result)
            results.append(result)
        return results


@settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_case())
def test_mutated_manifests_never_crash_and_every_resource_gets_a_status(
    mutation: tuple[str, list[Any], list[Any]],
) -> None:
    _, case, mutated = mutation
    translate_mutation(case, mutated)


@settings(max_examples=150, derandomize=True, deadline=None, database=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
def test_random_text_is_an_input_error_never_a_crash(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "random.yaml").write_text(text, encoding="utf-8", errors="surrogateescape")
        snapshot, result = _translate_folder(folder)
        assert_every_resource_has_a_status(snapshot, result)


@settings(
    max_examples=24,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated_case())
def test_envoy_accepts_what_mutated_manifests_translate_to(
    mutation: tuple[str, list[Any], list[Any]],
) -> None:
    """Whatever was not rejected is served: Envoy must accept it (no NACK)."""
    name, case, mutated = mutation
    for result in translate_mutation(case, mutated):
        refusal = envoy_refusal(result.xds)
        assert refusal is None, f"{name} mutated to:\n{yaml.safe_dump_all(mutated)}\n{refusal}"
