"""The proxy bootstrap, checked by Envoy itself (`--mode validate`), and the admin listener
that serves Envoy's admin on the admin port."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gw.proxy.admin import CLUSTER, LIST_LOGGERS_ON_GET, NAME
from gw.proxy.bootstrap import BootstrapOptions, bootstrap_json, build_bootstrap
from gw.proxy.supervisor import envoy_path


def test_envoy_accepts_the_bootstrap(tmp_path: Path) -> None:
    path = tmp_path / "bootstrap.json"
    path.write_text(bootstrap_json(BootstrapOptions(node_id="gateway-proxy-test", admin_port=1)))
    result = subprocess.run(
        [envoy_path(), "--mode", "validate", "-c", str(path), "--disable-hot-restart"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"configuration '{path}' OK" in result.stdout + result.stderr


def test_admin_port_fronts_a_private_admin_socket() -> None:
    bootstrap = build_bootstrap(
        BootstrapOptions(node_id="node-a", admin_host="127.0.0.1", admin_port=19001)
    )
    assert bootstrap.admin.address.pipe.path == "@gw-proxy-admin-node-a"
    (listener,) = bootstrap.static_resources.listeners
    assert listener.name == NAME
    assert listener.address.socket_address.port_value == 19001
    admin_cluster = next(c for c in bootstrap.static_resources.clusters if c.name == CLUSTER)
    endpoint = admin_cluster.load_assignment.endpoints[0].lb_endpoints[0].endpoint
    assert endpoint.address.pipe.path == "@gw-proxy-admin-node-a"
    # Only a bare GET /logging becomes a POST: a level change over GET stays refused.
    assert 'headers:get(":path") == "/logging"' in LIST_LOGGERS_ON_GET
