"""`Options.route_stats` (`gw up --route-stats`): every route gets Envoy statistics of its
own, under its name; off by default (they cost the proxy CPU and memory per route)."""

from __future__ import annotations

from pathlib import Path

from envoy.config.route.v3 import route_pb2

from gw.store.directory import DirectoryStore
from gw.translator.envoy import names
from gw.translator.options import Options
from gw.translator.translation import translate

SHOP = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    domains: [shop.test]
    routes:
      - matchers: [{prefix: /api}]
        delegateAction: {ref: {name: api}}
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200, body: home}
---
apiVersion: gateway.vendor.io/v1
kind: RouteTable
metadata: {name: api, namespace: default}
spec:
  routes:
    - matchers: [{prefix: /api}]
      directResponseAction: {status: 200, body: api}
"""


def _routes(tmp_path: Path, options: Options) -> dict[str, str]:
    (tmp_path / "shop.yaml").write_text(SHOP)
    result = translate(DirectoryStore(tmp_path).scan(), options)
    configs = result.served[result.proxy.role].of(names.ROUTE).values()
    return {
        route.name: route.stat_prefix
        for config in configs
        if isinstance(config, route_pb2.RouteConfiguration)
        for vhost in config.virtual_hosts
        for route in vhost.routes
    }


def test_routes_have_statistics_of_their_own_when_asked(tmp_path: Path) -> None:
    routes = _routes(tmp_path, Options(route_stats=True))
    assert routes == {"default_shop-route-0": "default_shop-route-0",
                      "default_shop-route-1": "default_shop-route-1"}  # fmt: skip


def test_no_route_statistics_by_default(tmp_path: Path) -> None:
    routes = _routes(tmp_path, Options())
    assert set(routes) == {"default_shop-route-0", "default_shop-route-1"}
    assert set(routes.values()) == {""}
