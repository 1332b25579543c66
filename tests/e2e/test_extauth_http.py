"""The extauth server's HTTP door end to end: `gw up` declares `extauth-http`, so a
basic-auth AuthConfig is checked over HTTP/1.1 (Envoy's `gw.ext_authz.http` filter) and
the gRPC filter behind it does not run. The other extauth tests show that the answers are
the same; this one shows which door they came through, from Envoy's cluster statistics."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.htpasswd import apr1

pytestmark = pytest.mark.e2e

HTTP_CLUSTER = "extauth-http_gw-system"
GRPC_CLUSTER = "extauth_gw-system"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtauthGateway]:
    gateway = ExtauthGateway(tmp_path_factory.mktemp("extauth-http"))
    try:
        salt, hashed = apr1("alice", "wonder land")
        users = f"\n        users:\n          alice: {{salt: '{salt}', hashedPassword: '{hashed}'}}"
        gateway.write("ac", chain("basic", f"\n  - basicAuth:\n      realm: gw\n      apr:{users}"))
        gateway.gw.wait_status("AuthConfig gw-system.basic", "Accepted")
        gateway.guard("basic", "basic")
        yield gateway
    finally:
        gateway.stop()


def requests_to(gateway: ExtauthGateway, cluster: str) -> int:
    stats = httpx.get(gateway.gw.proxy_admin_url + "/stats", timeout=5).text
    prefix = f"cluster.{cluster}.upstream_rq_total: "
    lines = [line for line in stats.splitlines() if line.startswith(prefix)]
    return int(lines[0].removeprefix(prefix)) if lines else 0


def test_checks_go_through_the_http_door_only(gateway: ExtauthGateway) -> None:
    http, grpc = requests_to(gateway, HTTP_CLUSTER), requests_to(gateway, GRPC_CLUSTER)
    good = base64.b64encode(b"alice:wonder land").decode()
    for _ in range(5):
        allowed = gateway.get(
            "basic.test", "/private", headers={"authorization": f"Basic {good}", "x-user-id": "eve"}
        )
        assert allowed.status_code == 200
        seen: dict[str, Any] = allowed.json()
        assert seen["headers"]["x-user-id"] == "alice"  # the server's, not the client's
    denied = gateway.get("basic.test", "/private")
    assert denied.status_code == 401
    assert denied.headers["www-authenticate"] == 'Basic realm="gw"'
    assert "x-echo-name" not in denied.headers
    assert requests_to(gateway, HTTP_CLUSTER) - http == 6
    assert requests_to(gateway, GRPC_CLUSTER) == grpc  # the gRPC filter never ran
