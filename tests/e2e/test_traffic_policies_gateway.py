"""A Gateway's `routeOptions` end to end: two Gateways serve the same virtual host, whose
virtual host and route both set a response header; on the one with
`mostSpecificHeaderMutationsWins` the route's value reaches the client, on the other the
virtual host's (Envoy's default order)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.ports import free_port
from tests.support.processes import GwUp

pytestmark = pytest.mark.e2e

CONFIG = """
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: route-wins, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {route_wins}
  httpGateway: {{}}
  routeOptions: {{mostSpecificHeaderMutationsWins: true}}
---
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: default-order, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {default_order}
  httpGateway: {{}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: layers, namespace: default}}
spec:
  virtualHost:
    domains: [layers.example.com]
    options:
      headerManipulation:
        responseHeadersToAdd: [{{header: {{key: x-layer, value: vhost}}, append: false}}]
    routes:
      - options:
          headerManipulation:
            responseHeadersToAdd: [{{header: {{key: x-layer, value: route}}, append: false}}]
        directResponseAction: {{status: 200, body: layers}}
"""


@pytest.fixture(scope="module")
def ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    work = tmp_path_factory.mktemp("route-options")
    route_wins, default_order = free_port(), free_port()
    folder = work / "config"
    folder.mkdir()
    (folder / "gateways.yaml").write_text(
        CONFIG.format(route_wins=route_wins, default_order=default_order)
    )
    up = GwUp(folder, work / "home")
    try:
        up.wait_status("Gateway gw-system.route-wins", "Accepted")
        up.wait_status("VirtualService default.layers", "Accepted")
        yield route_wins, default_order
    finally:
        up.stop()


def layer(port: int) -> str:
    response = httpx.get(
        f"http://127.0.0.1:{port}/", headers={"host": "layers.example.com"}, timeout=10
    )
    assert response.status_code == 200, (response.status_code, response.text)
    assert response.text == "layers"
    return response.headers["x-layer"]


def test_most_specific_header_mutations_win_on_that_gateway(ports: tuple[int, int]) -> None:
    route_wins, default_order = ports
    assert layer(route_wins) == "route"
    assert layer(default_order) == "vhost"
