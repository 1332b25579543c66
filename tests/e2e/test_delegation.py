"""Delegation and upstream groups end to end through Envoy: RouteTables by reference and
by selector (weight order, re-sorting of tables that share a weight), nested tables, a
cycle's statuses, a rejected table that keeps its last accepted routes, UpstreamGroup
weights, and the delegation example of `examples/delegation` applied unchanged.

Upstreams are `gw echo` processes; `x-echo-name` tells which one answered.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.manifests import upstream
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
HOST = "shop.example.com"
VS_KEY = "VirtualService default.shop"


SHOP = f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: shop, namespace: default}}
spec:
  virtualHost:
    domains: [{HOST}]
    routes:
      - matchers: [{{prefix: /api}}]
        options:
          headerManipulation:
            requestHeadersToAdd: [{{header: {{key: x-parent, value: shop}}}}]
        delegateAction: {{ref: {{name: api, namespace: apis}}}}
      - matchers: [{{prefix: /teams}}]
        delegateAction:
          selector: {{labels: {{team: shop}}, namespaces: ["*"]}}
      - matchers: [{{prefix: /ug}}]
        routeAction: {{upstreamGroup: {{name: split}}}}
"""

API_TABLE = """
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: api, namespace: apis}
spec:
  routes:
    - matchers: [{prefix: /api/users}]
      options: {prefixRewrite: /users}
      routeAction: {single: {upstream: {name: beta, namespace: default}}}
    - matchers: [{prefix: /api/v2}]
      delegateAction: {ref: {name: api-v2}}
    - matchers: [{prefix: /api}]
      routeAction: {single: {upstream: {name: alpha, namespace: default}}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: api-v2, namespace: apis}
spec:
  routes:
    - matchers: [{exact: /api/v2/health}]
      directResponseAction: {status: 200, body: v2 healthy}
"""


def team_table(name: str, weight: int, prefix: str, target: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {{name: {name}, namespace: teams, labels: {{team: shop}}}}
spec:
  weight: {weight}
  routes:
    - matchers: [{{prefix: {prefix}}}]
      routeAction: {{single: {{upstream: {{name: {target}, namespace: default}}}}}}
"""


def group(alpha: int, beta: int) -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: UpstreamGroup
metadata: {{name: split, namespace: default}}
spec:
  destinations:
    - {{destination: {{upstream: {{name: alpha}}}}, weight: {alpha}}}
    - {{destination: {{upstream: {{name: beta}}}}, weight: {beta}}}
"""


def teams(broad_weight: int) -> str:
    """`/teams/sp` → alpha and `/teams/special` → beta; with the broad table first (lower
    weight), it catches /teams/special too. Two tables of weight 5 are re-sorted."""
    return "---".join(
        [
            team_table("broad", broad_weight, "/teams/sp", "alpha"),
            team_table("special", 10, "/teams/special", "beta"),
            team_table("same-short", 5, "/teams/same", "alpha"),
            team_table("same-long", 5, "/teams/same/longer", "beta"),
        ]
    )


@pytest.fixture(scope="module")
def echoes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Echo, Echo]]:
    work = tmp_path_factory.mktemp("delegation-echo")
    alpha, beta = Echo(work, "alpha"), Echo(work, "beta")
    yield alpha, beta
    alpha.stop()
    beta.stop()


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, echoes: tuple[Echo, Echo]) -> Iterator[GwUp]:
    work = tmp_path_factory.mktemp("delegation")
    alpha, beta = echoes
    folder = work / "config"
    folder.mkdir()
    (folder / "upstreams.yaml").write_text(
        upstream("alpha", alpha.port) + "---" + upstream("beta", beta.port)
    )
    (folder / "shop.yaml").write_text(SHOP)
    (folder / "api.yaml").write_text(API_TABLE)
    (folder / "teams.yaml").write_text(teams(broad_weight=0))
    (folder / "group.yaml").write_text(group(100, 0))
    up = GwUp(folder, work / "home")
    try:
        # Warning: two team tables share weight 5, so their routes were re-sorted.
        up.wait_status(VS_KEY, "Warning")
        yield up
    finally:
        up.stop()


def send(gw: GwUp, path: str, host: str = HOST, method: str = "GET") -> httpx.Response:
    return httpx.request(method, gw.url + path, headers={"host": host}, timeout=10)


def name_of(response: httpx.Response) -> str:
    assert response.status_code == 200, (response.status_code, response.text)
    return str(response.headers["x-echo-name"])


def test_delegation_by_reference_and_nested(gw: GwUp) -> None:
    body = send(gw, "/api/users/7").json()
    assert body["name"] == "beta"
    assert body["path"] == "/users/7"
    assert body["headers"]["x-parent"] == "shop"  # the parent's options reach the child
    assert name_of(send(gw, "/api/orders")) == "alpha"
    nested = send(gw, "/api/v2/health")
    assert (nested.status_code, nested.text) == (200, "v2 healthy")
    for key in ("RouteTable apis.api", "RouteTable apis.api-v2"):
        assert gw.status(key)["state"] == "Accepted"  # type: ignore[index]


def test_selector_orders_tables_by_weight(gw: GwUp) -> None:
    # broad (weight 0) comes before special (weight 10): /teams/sp catches /teams/special.
    assert name_of(send(gw, "/teams/special")) == "alpha"
    # same-short and same-long share weight 5: the longer prefix is tried first.
    assert name_of(send(gw, "/teams/same/longer")) == "beta"
    assert name_of(send(gw, "/teams/same")) == "alpha"
    (gw.folder / "teams.yaml").write_text(teams(broad_weight=20))
    wait_until(lambda: name_of(send(gw, "/teams/special")) == "beta", what="the reweighted tables")
    assert name_of(send(gw, "/teams/spare")) == "alpha"


def order_tables(beta_weight: int | None, broad_weight: int | None) -> str:
    """The route-ordering guide's two tables: a specific regex (to beta) and a broad one
    (to alpha), with the given weights (None: unset, 0)."""

    def table(name: str, weight: int | None, regex: str, target: str) -> str:
        weight_line = "" if weight is None else f"  weight: {weight}\n"
        return f"""
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {{name: {name}, namespace: default, labels: {{app: myapp}}}}
spec:
{weight_line}  routes:
    - matchers: [{{regex: "{regex}"}}]
      routeAction: {{single: {{upstream: {{name: {target}}}}}}}
"""

    return "---".join(
        [
            table("rt-specific", beta_weight, "/api/homepage-beta-flag.*", "beta"),
            table("rt-broad", broad_weight, "/api/homepage.*", "alpha"),
        ]
    )


ORDER_VS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: order, namespace: default}
spec:
  virtualHost:
    domains: [order.example.com]
    routes:
      - matchers: [{prefix: /api}]
        delegateAction: {selector: {labels: {app: myapp}}}
"""


def test_tables_of_one_weight_are_sorted_and_the_parent_warned(gw: GwUp) -> None:
    """The route-ordering guide's example: with both tables at the default weight the
    routes are sorted (regexes by descending text: `/api/homepage.*` comes first and
    catches the beta-flag path) and the VirtualService says so; distinct weights restore
    the written order and the warning goes away."""
    host, key = "order.example.com", "VirtualService default.order"
    (gw.folder / "order.yaml").write_text(ORDER_VS + "---" + order_tables(None, None))
    status = gw.wait_status(key, "Warning")
    assert status["reason"] == (
        "warning: \n  spec.virtualHost.routes[0].delegateAction: route tables "
        "default.rt-broad, default.rt-specific have the same weight (0): their routes were "
        "sorted by path (exact, then regex, then prefix paths, each in descending order, so "
        "/a/b before /a) instead of kept in the order written; give each table its own "
        "weight to choose the order"
    )
    wait_until(
        lambda: send(gw, "/api/homepage-beta-flag-on", host=host).status_code == 200,
        what="the sorted routes",
    )
    assert name_of(send(gw, "/api/homepage-beta-flag-on", host=host)) == "alpha"
    (gw.folder / "order.yaml").write_text(ORDER_VS + "---" + order_tables(10, 20))
    gw.wait_status(key, "Accepted")
    wait_until(
        lambda: name_of(send(gw, "/api/homepage-beta-flag-on", host=host)) == "beta",
        what="the weighted tables in their written order",
    )
    assert name_of(send(gw, "/api/homepage", host=host)) == "alpha"


def test_upstream_group_weights(gw: GwUp) -> None:
    assert {name_of(send(gw, "/ug")) for _ in range(20)} == {"alpha"}
    (gw.folder / "group.yaml").write_text(group(0, 100))
    wait_until(lambda: name_of(send(gw, "/ug")) == "beta", what="the new weights")
    assert {name_of(send(gw, "/ug")) for _ in range(20)} == {"beta"}
    (gw.folder / "group.yaml").write_text(group(50, 50))
    seen: set[str] = set()
    wait_until(
        lambda: seen.add(name_of(send(gw, "/ug"))) or seen == {"alpha", "beta"},
        what="both upstreams to answer a 50/50 split",
    )


def test_a_rejected_table_keeps_the_last_accepted_routes(gw: GwUp) -> None:
    path = gw.folder / "api.yaml"
    path.write_text(API_TABLE.replace("{prefix: /api/users}", '{regex: "/api/(users"}'))
    status = gw.wait_status("RouteTable apis.api", "Rejected")
    assert "invalid regex" in status["reason"]
    vs = gw.wait_status(VS_KEY, "Rejected")
    assert "on sub route table apis.api: spec.routes[0].matchers[0].regex" in vs["reason"]
    assert vs["messages"] == ["its last accepted configuration is still being served"]
    assert send(gw, "/api/users/7").json()["path"] == "/users/7"
    path.write_text(API_TABLE)
    gw.wait_status(VS_KEY, "Warning")


def test_cycle_is_reported_on_the_table_that_closes_it(gw: GwUp) -> None:
    (gw.folder / "loop.yaml").write_text(
        """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: loop, namespace: default}
spec:
  virtualHost:
    domains: [loop.example.com]
    routes:
      - matchers: [{prefix: /}]
        delegateAction: {ref: {name: first}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: first, namespace: default}
spec:
  routes:
    - matchers: [{prefix: /a}]
      delegateAction: {ref: {name: second}}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: second, namespace: default}
spec:
  routes:
    - matchers: [{prefix: /a/b}]
      delegateAction: {ref: {name: first}}
"""
    )
    second = gw.wait_status("RouteTable default.second", "Rejected")
    assert second["reason"] == (
        "1 error occurred:\n\t* spec.routes[0].delegateAction: invalid route: delegation "
        "cycle detected: default.first -> default.second -> default.first\n\n"
    )
    first = gw.wait_status("RouteTable default.first", "Rejected")
    assert "RouteTable default.second is rejected" in first["reason"]
    gw.wait_status("VirtualService default.loop", "Rejected")
    assert send(gw, "/a/b/c", host="loop.example.com").status_code == 404  # never accepted
    assert name_of(send(gw, "/api/orders")) == "alpha"  # other hosts keep serving


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, echoes: tuple[Echo, Echo]) -> Iterator[GwUp]:
    """`examples/delegation` as it is, but for the upstreams' ports (the echoes')."""
    work = tmp_path_factory.mktemp("delegation-example")
    alpha, beta = echoes
    folder = work / "config"
    shutil.copytree(ROOT / "examples" / "delegation", folder)
    upstreams = (folder / "upstreams.yaml").read_text()
    upstreams = upstreams.replace("port: 9001", f"port: {alpha.port}")
    (folder / "upstreams.yaml").write_text(upstreams.replace("port: 9002", f"port: {beta.port}"))
    up = GwUp(folder, work / "home")
    try:
        up.wait_status("VirtualService gw-system.petstore", "Accepted")
        yield up
    finally:
        up.stop()


def test_the_delegation_example_applies_unchanged(example: GwUp) -> None:
    statuses = example.statuses()
    assert statuses and {s["state"] for s in statuses.values()} == {"Accepted"}, statuses
    assert set(statuses) >= {
        "VirtualService gw-system.petstore",
        "RouteTable team-pets.pets-routes",
        "RouteTable team-store.store-routes",
        "UpstreamGroup gw-system.petstore-canary",
        "VirtualHostOption gw-system.cors-policy",
        "RouteOption gw-system.retry-policy",
    }
    host = "petstore.example.com"
    home = send(example, "/", host=host)
    assert (home.status_code, home.text) == (200, "petstore")
    pets = send(example, "/api/pets/1", host=host)
    assert name_of(pets) == "alpha"  # the canary group sends everything to v1
    assert pets.json()["path"] == "/pets/1"
    assert name_of(send(example, "/api/store/orders", host=host)) == "beta"
    assert name_of(send(example, "/api/store/orders", host=host, method="DELETE")) == "alpha"
    preflight = httpx.options(
        example.url + "/api/pets",
        headers={
            "host": host,
            "origin": "https://petstore.example.com",
            "access-control-request-method": "POST",
        },
        timeout=10,
    )
    assert preflight.headers["access-control-allow-origin"] == "https://petstore.example.com"
    assert preflight.headers["access-control-max-age"] == "86400"
