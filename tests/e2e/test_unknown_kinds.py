"""`gwctl validate` on a folder with a kind gw's groups do not have: the document is an
input error with a status on the resource it meant, and the command exits 1 (a misspelt
kind must fail CI, not vanish). Kinds of other groups are not gw's and pass unnoticed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gwctl import gwctl, parse_table

pytestmark = pytest.mark.e2e

FOLDER = """
apiVersion: gateway.vendor.io/v1
kind: VirtualServise
metadata: {name: typo, namespace: default}
spec: {}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: default}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: web, namespace: default}
spec:
  virtualHost:
    domains: [web.test]
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200}
"""


def test_validate_refuses_an_unknown_kind_of_gw_groups(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "all.yaml").write_text(FOLDER)
    result = gwctl(tmp_path / "home", "validate", "-f", str(folder))
    assert result.returncode == 1
    assert result.stderr == "Error: validation failed: 1 rejected, 0 unreadable manifests\n"
    rows = {(r["KIND"], r["NAME"]): r["STATUS"] for r in parse_table(result.stdout)}
    assert rows == {
        ("VirtualServise", "typo"): (
            "Rejected\nall.yaml, document 1: kind: VirtualServise is not a kind of "
            "gateway.vendor.io (its kinds: Gateway, HttpListenerOption, MatchableHttpGateway, "
            "MatchableTcpGateway, RouteOption, RouteTable, VirtualHostOption, VirtualService); "
            "check the spelling"
        ),
        ("VirtualService", "web"): "Accepted",
    }
