"""A rejected resource keeps serving its last accepted configuration (REFERENCE.md §2.4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gw.api import ResourceKey, parse_document
from gw.api.status import State
from gw.snapshot import InputError, Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.translation import Result, translate
from tests.golden.test_golden import ALL_CASES, options_for
from tests.unit.translator.test_incremental import documents, identical, write


def snapshot(*docs: str, errors: tuple[InputError, ...] = ()) -> Snapshot:
    resources = {}
    for doc in docs:
        resource = parse_document(yaml.safe_load(doc))
        resources[resource.key] = resource
    return Snapshot(resources=resources, errors=errors)


def vs(name: str, domain: str, body: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{domain}]
    routes:
      - matchers: [{{prefix: /}}]
        directResponseAction: {{status: 200, body: {body}}}
"""


def bodies(result: Result) -> dict[str, Any]:
    (listener,) = result.proxy.listeners
    return {v.name: v.routes[0].action.body for v in listener.virtual_hosts}  # type: ignore[union-attr]


WEB = ResourceKey("VirtualService", "default", "web")


def test_rejected_resource_serves_its_last_accepted_version() -> None:
    first = translate(snapshot(vs("web", "web.example.com", "v1")))
    bad = snapshot(errors=(InputError(None, "broken", WEB),))
    second = translate(bad, previous=first.accepted)
    assert second.statuses[WEB].state is State.REJECTED
    assert second.statuses[WEB].messages == [
        "its last accepted configuration is still being served"
    ]
    assert bodies(second) == {"default_web": "v1"}
    # and keeps doing so while it stays broken
    assert bodies(translate(bad, previous=second.accepted)) == {"default_web": "v1"}


def test_brand_new_rejected_resource_never_appears() -> None:
    result = translate(snapshot(errors=(InputError(None, "broken", WEB),)))
    assert bodies(result) == {}
    assert result.statuses[WEB].messages == []


def test_deleted_resource_is_forgotten() -> None:
    first = translate(snapshot(vs("web", "web.example.com", "v1")))
    second = translate(snapshot(), previous=first.accepted)
    assert bodies(second) == {}
    assert WEB not in second.accepted


def test_new_host_cannot_take_a_domain_served_by_a_fallback() -> None:
    first = translate(snapshot(vs("web", "web.example.com", "v1")))
    second = translate(
        snapshot(vs("thief", "web.example.com", "stolen"), errors=(InputError(None, "x", WEB),)),
        previous=first.accepted,
    )
    thief = ResourceKey("VirtualService", "default", "thief")
    assert second.statuses[thief].state is State.REJECTED
    assert "still served by the last accepted version of virtual service default.web" in (
        second.statuses[thief].reason
    )
    assert bodies(second) == {"default_web": "v1"}


def test_same_input_gives_byte_identical_output() -> None:
    docs = (vs("a", "a.example.com", "a"), vs("b", "b.example.com", "b"))
    one, two = translate(snapshot(*docs)), translate(snapshot(*reversed(docs)))
    for type_url, resources in one.xds.resources.items():
        other = two.xds.resources[type_url]
        assert list(resources) == list(other)
        for name, message in resources.items():
            assert message.SerializeToString(deterministic=True) == (
                other[name].SerializeToString(deterministic=True)
            )


def test_a_last_accepted_tls_host_is_not_served_on_a_gateway_no_longer_ssl(
    tmp_path: Path,
) -> None:
    """A TLS VirtualService on an `ssl` Gateway breaks (its last accepted host stays
    served); then the Gateway drops `ssl`. The listener is plain now: the plain hosts it
    selects are served there and the old TLS host is not (a listener is TLS or plain,
    never both; before, translation stopped with "mixes TLS and plain virtual hosts").
    Found by the random-edit property test."""
    case = next(c for c in ALL_CASES if c.name == "gateway-ssl.in.yaml")
    docs, options = documents(case), options_for(case)
    blue = next(i for i, d in enumerate(docs) if d["metadata"]["name"] == "blue")
    gateway = next(i for i, d in enumerate(docs) if d["metadata"]["name"] == "tls-blue")
    write(tmp_path, docs)
    store = DirectoryStore(tmp_path)
    first = translate(store.scan(), options)
    docs[blue]["apiVersion"] += "x"  # unreadable: its last accepted host stays served
    write(tmp_path, docs)
    second = translate(store.scan(), options, first.accepted, cache=first.cache)
    del docs[gateway]["spec"]["ssl"]
    write(tmp_path, docs)
    snapshot = store.scan()
    third = translate(snapshot, options, second.accepted, cache=second.cache)
    identical(third, translate(snapshot, options, second.accepted))
    (listener,) = [x for x in third.proxy.listeners if x.port == 9443]
    assert [v.name for v in listener.virtual_hosts] == ["default_plain"]
    assert all(v.tls is None for v in listener.virtual_hosts)
