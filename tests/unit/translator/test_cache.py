"""The translation cache changes how fast `translate()` runs, never what it returns."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from bench.fixtures import GATEWAY

from gw.api import ResourceKey
from gw.discovery import ServiceDiscovery
from gw.snapshot import Snapshot
from gw.store.directory import DirectoryStore
from gw.translator.envoy import Messages, names
from gw.translator.gateway.stagecache import StageCache
from gw.translator.options import Options
from gw.translator.translation import Result, translate
from tests.golden.test_golden import ALL_CASES, GOLDEN_NOW, case_id, options_for
from tests.unit.translator.test_hosts import DELEGATING
from tests.unit.translator.test_incremental import identical

OPTIONS = Options(now=GOLDEN_NOW)


def same_output(one: Result, two: Result) -> None:
    """Every output: each proxy's IR and xDS, the statuses, what the extauth and
    rate-limit servers are served, the references, the contributions kept."""
    identical(one, two)


@pytest.mark.parametrize("case", ALL_CASES, ids=case_id)
def test_warm_cache_gives_the_cold_output(case: Path, tmp_path: Path) -> None:
    shutil.copy(case, tmp_path / case.name)
    options = options_for(case)
    snapshot = ServiceDiscovery(options.namespace)(DirectoryStore(tmp_path).scan())
    cold = translate(snapshot, options)
    warm = translate(snapshot, options, cold.accepted, cache=cold.cache)
    same_output(warm, translate(snapshot, options, cold.accepted))
    again = translate(snapshot, options, warm.accepted, cache=warm.cache)
    same_output(again, translate(snapshot, options, warm.accepted))


VS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{domain}]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: {target}}}}}}}
"""
UPSTREAM = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: default}}
spec:
  static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}
"""


def test_a_sequence_of_edits(tmp_path: Path) -> None:
    """Each step is translated with the previous step's cache and compared with a cold
    translation of the same snapshot (given the same last-accepted state)."""
    store = DirectoryStore(tmp_path)
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a.test", target="up"))
    (tmp_path / "b.yaml").write_text(VS.format(name="b", domain="b.test", target="missing"))
    steps = [
        lambda: None,
        lambda: (tmp_path / "a.yaml").write_text(
            VS.format(name="a", domain="a2.test", target="up")
        ),
        lambda: (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=80)),
        lambda: (tmp_path / "b.yaml").write_text(
            VS.format(name="b", domain="a2.test", target="up")
        ),
        lambda: (tmp_path / "b.yaml").write_text("kind: [broken"),
        lambda: (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=0)),
        lambda: (tmp_path / "up.yaml").unlink(),
        lambda: (tmp_path / "b.yaml").write_text(VS.format(name="b", domain="b.test", target="up")),
    ]
    last: Result | None = None
    for step in steps:
        step()
        snapshot: Snapshot = store.scan()
        previous = last.accepted if last else None
        cold = translate(snapshot, OPTIONS, previous)
        warm = translate(snapshot, OPTIONS, previous, cache=last.cache if last else None)
        same_output(cold, warm)
        last = warm


def stage(result: Result) -> StageCache:
    """The stage-1 cache `result` leaves for the next translation (made now if pending)."""
    made = result.cache.prepare()
    assert made is not None
    return made


def host(result: Result, name: str) -> object:
    """The contribution of VirtualService `default.name` as the cache keeps it."""
    key = ResourceKey("VirtualService", "default", name)
    return stage(result).hosts.memos[key].built.contribution


def test_unchanged_hosts_are_reused_and_changes_rebuild(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a.test", target="up"))
    (tmp_path / "b.yaml").write_text(VS.format(name="b", domain="b.test", target="up"))
    first = translate(store.scan(), OPTIONS)
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a2.test", target="up"))
    second = translate(store.scan(), OPTIONS, first.accepted, cache=first.cache)
    assert host(second, "b") is host(first, "b")  # untouched: reused as is
    assert host(second, "a") is not host(first, "a")  # edited: rebuilt
    # A new upstream that b routes to (it looked it up, and found nothing) rebuilds b.
    (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=80))
    third = translate(store.scan(), OPTIONS, second.accepted, cache=second.cache)
    assert host(third, "b") is not host(second, "b")


def new_messages(before: Result, after: Result) -> set[tuple[str, str]]:
    """(type, name) of the xDS messages `after` has that are not `before`'s very objects
    (held serialized or not: `Messages.raw_items`)."""
    out = set()
    for type_url, messages in after.xds.resources.items():
        earlier = before.xds.resources[type_url]
        assert isinstance(messages, Messages) and isinstance(earlier, Messages)
        for name, message in messages.raw_items():
            if earlier.raw(name) is not message:
                out.add((type_url.rsplit(".", 1)[-1], name))
    return out


def memo(result: Result, name: str) -> object:
    return stage(result).hosts.memos[ResourceKey("VirtualService", "default", name)]


def test_a_new_port_on_an_upstream_leaves_its_hosts(tmp_path: Path) -> None:
    """A route reads of its Upstream only what refining its destination needs (subsets, a
    cloud function): a new port leaves the hosts that route there as they were (their
    memo, not built again, nor restated); of the xDS, only the cluster is a new message."""
    store = DirectoryStore(tmp_path)
    (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=80))
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a.test", target="up"))
    first = translate(store.scan(), OPTIONS)
    (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=81))
    snapshot = store.scan()
    second = translate(snapshot, OPTIONS, first.accepted, cache=first.cache)
    assert second.restated is not None  # incremental
    assert memo(second, "a") is memo(first, "a")
    assert ResourceKey("VirtualService", "default", "a") not in second.restated
    assert new_messages(first, second) == {("Cluster", "up_default")}
    same_output(translate(snapshot, OPTIONS, first.accepted), second)


def test_a_host_built_the_same_keeps_its_objects(tmp_path: Path) -> None:
    """Subsets on an Upstream rebuild the hosts that route to it (refining may read them);
    built the same (these routes ask for no subset), they keep their objects, so nothing
    made of them is made or sent again: only the Upstream's cluster is a new message."""
    store = DirectoryStore(tmp_path)
    (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=80))
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a.test", target="up"))
    first = translate(store.scan(), OPTIONS)
    subsets = UPSTREAM.format(name="up", port=80).replace(
        "}]}", "}], subsetSpec: {selectors: [{keys: [color]}]}}"
    )
    (tmp_path / "up.yaml").write_text(subsets)
    snapshot = store.scan()
    second = translate(snapshot, OPTIONS, first.accepted, cache=first.cache)
    assert second.restated is not None  # incremental
    assert memo(second, "a") is not memo(first, "a")  # built again
    assert host(second, "a") is host(first, "a")  # the same
    assert new_messages(first, second) == {("Cluster", "up_default")}
    same_output(translate(snapshot, OPTIONS, first.accepted), second)


def test_a_host_read_again_the_same_holds_the_new_resource(tmp_path: Path) -> None:
    """A VirtualService read from a new text that means the same (spaced otherwise) is a
    new object, built the same: its memo holds the new object (a memo is valid only for
    the very resource it holds: with the old one, every later look at it would build it
    again)."""
    store = DirectoryStore(tmp_path)
    text = VS.format(name="a", domain="a.test", target="up")
    (tmp_path / "a.yaml").write_text(text)
    first = translate(store.scan(), OPTIONS)
    (tmp_path / "a.yaml").write_text(text.replace("domains: ", "domains:   "))
    snapshot = store.scan()
    second = translate(snapshot, OPTIONS, first.accepted, cache=first.cache)
    key = ResourceKey("VirtualService", "default", "a")
    assert stage(second).hosts.memos[key].built.vs is snapshot.resources[key]
    same_output(translate(snapshot, OPTIONS, first.accepted), second)


def test_a_listener_without_its_own_forward_proxy_any_more(tmp_path: Path) -> None:
    """A listener whose dynamically forwarded routes went to a forward proxy of its own is
    built anew when those settings go: its routes go to the shared one again (the messages
    it kept were changed for its own proxy, and are not reused)."""
    case = next(c for c in ALL_CASES if c.name == "gateway-plugins-traffic.in.yaml")
    text = case.read_text()
    (tmp_path / "config.yaml").write_text(text)
    store = DirectoryStore(tmp_path)
    first = translate(store.scan(), options_for(case))
    own = "    options:\n      dynamicForwardProxy: {sslConfig: {}}\n"
    assert own in text
    (tmp_path / "config.yaml").write_text(text.replace(own, "    options: {}\n"))
    snapshot = store.scan()
    second = translate(snapshot, options_for(case), first.accepted, cache=first.cache)
    same_output(translate(snapshot, options_for(case), first.accepted), second)


def test_a_host_on_a_gateway_served_again_is_restated(tmp_path: Path) -> None:
    """A Gateway rejected through its HttpListenerOption has no listener; once that option
    no longer reads (its targets unknown), the Gateway is served again. The VirtualService
    placed on it is not rebuilt, but where it lands changed: its status names the proxy
    again, as a full translation's does (the incremental one kept the old, empty one)."""
    case = next(c for c in ALL_CASES if c.name == "httplisteneroption-invalid-options.in.yaml")
    documents = [d for d in case.read_text().split("\n---\n")]
    assert "name: other" in documents[1] and "kind: HttpListenerOption" in documents[2]
    store = DirectoryStore(tmp_path)
    for i, text in enumerate(documents):
        (tmp_path / f"doc-{i}.yaml").write_text(text)
    first = translate(store.scan(), options_for(case))
    (tmp_path / "doc-1.yaml").unlink()  # the other Gateway, where the host landed
    second = translate(store.scan(), options_for(case), first.accepted, cache=first.cache)
    (tmp_path / "doc-2.yaml").write_text("kind: [unclosed")
    snapshot = store.scan()
    third = translate(snapshot, options_for(case), second.accepted, cache=second.cache)
    assert third.restated is not None  # incremental
    web = ResourceKey("VirtualService", "default", "web")
    assert list(third.statuses[web].subresource_statuses) == ["*v1.Proxy.gateway-proxy_gw-system"]
    same_output(translate(snapshot, options_for(case), second.accepted), third)


def test_a_delegating_host_is_reused_with_its_findings_on_the_table(tmp_path: Path) -> None:
    """Building a host hands back its findings on the route tables too, so a host that
    delegates is reused like any other, and the table's status stays what it was."""
    store = DirectoryStore(tmp_path)
    (tmp_path / "shop.yaml").write_text(DELEGATING)
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a.test", target="up"))
    first = translate(store.scan(), OPTIONS)
    (tmp_path / "a.yaml").write_text(VS.format(name="a", domain="a2.test", target="up"))
    snapshot = store.scan()
    second = translate(snapshot, OPTIONS, first.accepted, cache=first.cache)
    shop = ResourceKey("VirtualService", "default", "shop")
    table = ResourceKey("RouteTable", "default", "api")
    assert stage(second).hosts.memos[shop] is stage(first).hosts.memos[shop]
    assert [f.field for f in second.reports.of(table).warnings] == [
        "spec.routes[0].matchers[0]",
        "spec.routes[1].routeAction.single.upstream",
    ]
    same_output(translate(snapshot, OPTIONS, first.accepted), second)


@pytest.mark.parametrize("shard_from", [0, 2], ids=["one-route-configuration", "sharded"])
def test_a_new_server_name_on_a_gateway_rebuilds_its_listener_alone(
    tmp_path: Path, shard_from: int
) -> None:
    """How a Gateway's listener speaks HTTP is read by its Listener message alone: changed,
    the translation is incremental, no host is built again or restated, and the Listener
    is the one new message of the listener (its route configurations and scopes are kept)."""
    options = Options(now=GOLDEN_NOW, shard_routes_from=shard_from)
    store = DirectoryStore(tmp_path)
    (tmp_path / "gateway.yaml").write_text(GATEWAY.format(server="edge-1"))
    (tmp_path / "up.yaml").write_text(UPSTREAM.format(name="up", port=80))
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.yaml").write_text(
            VS.format(name=name, domain=f"{name}.test", target="up")
        )
    first = translate(store.scan(), options)
    (tmp_path / "gateway.yaml").write_text(GATEWAY.format(server="edge-2"))
    snapshot = store.scan()
    second = translate(snapshot, options, first.accepted, cache=first.cache)
    assert second.restated is not None  # incremental
    assert "VirtualService" not in {k.kind for k in second.restated}
    assert all(memo(second, n) is memo(first, n) for n in ("a", "b", "c"))
    # The clusters are made again by the global passes on every translation (packing finds
    # them the same and sends nothing); the route configurations and scopes are kept.
    assert {t for t, _ in new_messages(first, second)} - {"Cluster"} == {"Listener"}
    if shard_from:
        assert second.xds.resources[names.SCOPED_ROUTE]  # sharded indeed
    same_output(translate(snapshot, options, first.accepted), second)


@pytest.mark.parametrize(
    ("old", "new", "rebuilt"),
    [
        ("clientId: myclientid", "clientId: another-client", False),
        ("scopes: [email]", "scopes: [email, profile]", False),
        ("callbackPath: /callback(/.*)?", "callbackPath: /oidc/back(/.*)?", True),
    ],
    ids=["client-id", "scopes", "callback-path"],
)
def test_a_host_reads_of_its_auth_config_only_the_login_routes(
    tmp_path: Path, old: str, new: str, rebuilt: bool
) -> None:
    """A host that names an AuthConfig reads of it the paths of its logins (they get routes
    in the host) and whether a step reads a JWT: a new client id or scope leaves the host
    as it was; a new callback path builds it again."""
    case = next(c for c in ALL_CASES if c.name == "authconfig-oidc-options.in.yaml")
    text = case.read_text()
    assert old in text
    store = DirectoryStore(tmp_path)
    (tmp_path / case.name).write_text(text)
    first = translate(store.scan(), OPTIONS)
    (tmp_path / case.name).write_text(text.replace(old, new))
    snapshot = store.scan()
    second = translate(snapshot, OPTIONS, first.accepted, cache=first.cache)
    assert second.restated is not None  # incremental
    key = ResourceKey("VirtualService", "gw-system", "app")
    same = stage(second).hosts.memos[key] is stage(first).hosts.memos[key]
    assert same is not rebuilt
    same_output(translate(snapshot, OPTIONS, first.accepted), second)
