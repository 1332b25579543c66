"""Routes that match on a path alone, or forward without options, share one IR value per
path and per destination (the IR is frozen): 100,000 such routes keep a few objects. What
a route carries beyond them gets an object of its own, and sharing changes no value."""

from __future__ import annotations

from pathlib import Path

from gw.api.status import State
from gw.store.directory import DirectoryStore
from gw.translator import ir
from gw.translator.options import Options
from gw.translator.translation import translate
from tests.golden.test_golden import GOLDEN_NOW

HOST = """---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: gw-system}}
spec:
  virtualHost:
    domains: [{name}.test]
    routes:
      - matchers: [{{prefix: /api}}]
        routeAction: {{single: {{upstream: {{name: backend}}}}}}
      - matchers: [{{prefix: /api, headers: [{{name: x-v, value: "2"}}]}}]
        routeAction: {{single: {{upstream: {{name: backend}}}}}}
      - matchers: [{{prefix: /slow}}]
        routeAction: {{single: {{upstream: {{name: backend}}}}}}
        options: {{timeout: 5s}}
"""
UPSTREAM = """---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: backend, namespace: gw-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 9}]}}
"""


def _routes(tmp_path: Path) -> dict[str, tuple[ir.Route, ...]]:
    (tmp_path / "config.yaml").write_text(
        UPSTREAM + HOST.format(name="one") + HOST.format(name="two")
    )
    result = translate(DirectoryStore(tmp_path).scan(), Options(now=GOLDEN_NOW))
    states = {k.name: s.state for k, s in result.statuses.items() if k.kind == "VirtualService"}
    assert states == {"one": State.ACCEPTED, "two": State.ACCEPTED}
    return {
        v.source.name: v.routes
        for proxy in result.proxies
        for listener in proxy.listeners
        for v in listener.virtual_hosts
    }


def test_path_matches_and_plain_forwards_are_shared_across_hosts(tmp_path: Path) -> None:
    routes = _routes(tmp_path)
    one, two = routes["one"], routes["two"]
    assert one[0].match is two[0].match
    assert one[0].match == ir.RouteMatch(path_kind="prefix", path="/api")
    assert one[0].action is two[0].action
    assert one[0].action == ir.Forward(clusters=(ir.WeightedCluster(cluster="backend_gw-system"),))


def test_what_a_route_adds_is_its_own(tmp_path: Path) -> None:
    routes = _routes(tmp_path)
    one, two = routes["one"], routes["two"]
    # A header to match: a match of its own, equal to the other host's.
    assert one[1].match is not one[0].match
    assert one[1].match is not two[1].match
    assert one[1].match == two[1].match
    assert [h.name for h in one[1].match.headers] == ["x-v"]
    # A timeout: a forward of its own, to the same shared destination.
    slow = one[2].action
    assert isinstance(slow, ir.Forward) and slow.timeout_ms == 5000
    assert slow is not two[2].action
    assert slow.clusters[0] is one[0].action.clusters[0]  # type: ignore[union-attr]
