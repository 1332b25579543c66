"""Hostile manifest files (the corpus in `hostile_manifests.py`: alias bombs, deep nesting,
a huge file, too many documents, names Kubernetes refuses) read by the real folder store and
translated by the real translator, as the control plane does.

Each must: never make the store or the translator raise; cost little (the memory Python
allocates while reading and translating stays under `MEMORY_BUDGET`: an expanded bomb costs
gigabytes); end as a `Rejected` status or an input error of its file naming the rule it
breaks; and leave everything else serving: a good file beside it is accepted, and a
resource it replaces keeps serving its last accepted version.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from gw.api.status import State
from gw.discovery import ServiceDiscovery
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.options import Options
from gw.translator.translation import Result, translate
from tests.reliability.hostile_manifests import CORPUS, Hostile
from tests.reliability.test_properties import assert_every_resource_has_a_status

#: What reading and translating one hostile folder may allocate (the folder's own good
#: resources take well under a megabyte).
MEMORY_BUDGET = 64 * 1024 * 1024

GOOD = """apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: good, namespace: default}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 9000}]}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: good, namespace: default}
spec:
  virtualHost:
    domains: [good.example.com]
    routes: [{matchers: [{prefix: /}], routeAction: {single: {upstream: {name: good}}}}]
"""

#: The good version of what a hostile file replaces (`Hostile.replaces`).
WEB = """apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  virtualHost:
    domains: [web.example.com]
    routes: [{matchers: [{prefix: /}], routeAction: {single: {upstream: {name: good}}}}]
"""


def served_domains(result: Result) -> set[str]:
    return {
        domain
        for listener in result.proxy.listeners
        for vhost in listener.virtual_hosts
        for domain in vhost.domains
    }


def translate_folder(store: DirectoryStore, previous: Result | None) -> tuple[Snapshot, Result]:
    snapshot = ServiceDiscovery(Options().namespace)(store.scan())
    if previous is None:
        return snapshot, translate(snapshot, Options())
    return snapshot, translate(snapshot, Options(), previous.accepted, cache=previous.cache)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_a_hostile_file_is_refused_cheaply_and_the_rest_keeps_serving(
    name: str, tmp_path: Path
) -> None:
    hostile: Hostile = CORPUS[name]
    (tmp_path / "good.yaml").write_text(GOOD)
    if hostile.replaces is not None:
        (tmp_path / "web.yaml").write_text(WEB)
    store = DirectoryStore(tmp_path)
    _, accepted = translate_folder(store, None)
    assert {"good.example.com"} <= served_domains(accepted)

    for file_name, content in hostile.files.items():
        (tmp_path / file_name).write_text(content)
    tracemalloc.start()
    try:
        snapshot, result = translate_folder(store, accepted)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < MEMORY_BUDGET, f"{name}: reading it allocated {peak:,} bytes"
    assert_every_resource_has_a_status(snapshot, result)
    statuses = {str(key): status for key, status in result.statuses.items()}
    for where, rule in hostile.expect.items():
        if where in hostile.files:  # blamed on the file: nothing in it was read
            messages = [e.message for e in snapshot.errors if e.source and e.source.path == where]
            assert messages and all(rule in m for m in messages), (where, messages)
            continue
        status = statuses.get(where)
        assert status is not None, f"{where} has no status: {sorted(statuses)}"
        assert status.state is State.REJECTED and rule in status.reason, (where, status)
    assert statuses["VirtualService default.good"].state is State.ACCEPTED
    assert "good.example.com" in served_domains(result)
    if hostile.replaces is not None:
        assert "web.example.com" in served_domains(result), "the last accepted version is gone"
