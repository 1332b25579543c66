"""Request headers from secrets (`headerSecretRef`) through a real `gw up` and Envoy: the
secret made by `gwctl create secret header`, its values arriving at the upstream as
written, a change to the secret alone reaching the proxy, and a removed secret rejecting
the VirtualService while the last accepted configuration keeps serving."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.gwctl import gwctl, parse_table
from tests.support.manifests import upstream
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

HOST = "partner.example.com"
VIRTUAL_SERVICE = f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: partner, namespace: default}}
spec:
  virtualHost:
    domains: [{HOST}]
    options:
      headerManipulation:
        requestHeadersToAdd:
          - headerSecretRef: {{name: partner-headers, namespace: gw-system}}
            append: false
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: echo, namespace: gw-system}}}}}}
"""


@dataclass
class Setup:
    gw: GwUp
    folder: Path

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        return gwctl(self.gw.home, *args, input=input)

    def seen(self, **headers: str) -> dict[str, Any]:
        """The request headers the echo upstream received."""
        response = httpx.get(self.gw.url + "/", headers={"host": HOST, **headers}, timeout=5)
        return dict(response.json()["headers"]) if response.status_code == 200 else {}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("header-secrets")
    echo = Echo(root, "echo")
    folder = root / "config"
    folder.mkdir()
    (folder / "upstreams.yaml").write_text(upstream("echo", echo.port, "gw-system"))
    gw = GwUp(folder, root / "home")
    try:
        yield Setup(gw, folder)
    finally:
        gw.stop()
        echo.stop()


def test_headers_from_a_secret_reach_the_upstream_and_follow_the_secret(setup: Setup) -> None:
    made = setup.run(
        "create", "secret", "header", "partner-headers",
        "--headers", "-", input="x-partner-id=acme\nx-partner-token=s3cr3t%20value\n",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert parse_table(made.stdout) == [{"SECRET": "partner-headers", "TYPE": "Header"}]
    assert "s3cr3t" not in made.stdout + made.stderr  # never printed back
    stored = setup.folder / "gwctl-created" / "secret-gw-system-partner-headers.yaml"
    secret = yaml.safe_load(stored.read_text())
    assert secret["type"] == "gw.vendor.io/header"
    assert stored.stat().st_mode & 0o777 == 0o600

    (setup.folder / "partner.yaml").write_text(VIRTUAL_SERVICE)
    wait_until(lambda: setup.seen().get("x-partner-id") == "acme", what="the secret's header")
    # As written (the % is no Envoy substitution); append: false replaces the client's copy.
    seen = setup.seen(**{"x-partner-token": "forged"})
    assert (seen["x-partner-token"], seen["x-partner-id"]) == ("s3cr3t%20value", "acme")

    # gwctl's views of the configuration (gw's and Envoy's own) name the secret's headers,
    # never their values.
    for view in (("proxy", "served-config"), ("proxy", "dump")):
        shown = setup.run(*view)
        assert shown.returncode == 0, shown.stderr
        assert "x-partner-token" in shown.stdout and "<redacted>" in shown.stdout, view
        assert "s3cr3t" not in shown.stdout and "acme" not in shown.stdout, view

    # Only the secret changes: the virtual host follows it.
    secret["data"]["x-partner-token"] = base64.b64encode(b"rotated").decode()
    stored.write_text(yaml.safe_dump(secret))
    wait_until(lambda: setup.seen().get("x-partner-token") == "rotated", what="the rotated value")

    # Without the secret the VirtualService is Rejected and the last accepted host serves on.
    stored.unlink()

    def state() -> str:
        listed = setup.run("get", "vs", "partner", "-n", "default")
        return parse_table(listed.stdout)[0]["STATUS"] if listed.returncode == 0 else ""

    wait_until(lambda: state().startswith("Rejected"), what="the Rejected status")
    assert "list did not find secret gw-system.partner-headers" in state()
    assert setup.seen().get("x-partner-token") == "rotated"
