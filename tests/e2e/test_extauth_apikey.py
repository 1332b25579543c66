"""`apiKeyAuth` end to end, as the established gateway's guide runs it: keys made with
`gwctl create secret apikey` (labelled, and one generated), picked by `labelSelector` or
named by `apiKeySecretRefs`, a custom `headerName`, a secret value copied into a header
(`headersFromMetadataEntry`), and key rotation by editing the secret in the folder while
everything keeps running. Real `gw up` with its extauth server, Envoy, an echo app, gwctl.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.extauth_gateway import ExtauthGateway
from tests.support.files import save
from tests.support.gwctl import gwctl, parse_table
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

INFRA_KEY = "N2YwMDIxZTEtNGUzNS1jNzgzLTRkYjAtYjE2YzRkZGVmNjcy"
DENIED = "API key is missing or invalid"

AUTH_CONFIGS = """
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {name: by-label, namespace: gw-system}
spec:
  configs:
  - apiKeyAuth:
      headerName: api-key
      labelSelector: {team: infrastructure}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {name: by-name, namespace: gw-system}
spec:
  configs:
  - apiKeyAuth:
      headerName: X-Partner-Key
      headersFromMetadataEntry:
        x-partner-email: {name: email, required: true}
        x-partner-tier: {name: tier}
      k8sSecretApikeyStorage:
        apiKeySecretRefs:
        - {name: partner, namespace: default}
        - {name: no-email, namespace: default}
---
apiVersion: v1
kind: Secret
metadata: {name: partner, namespace: default}
type: extauth.vendor.io/apikey
stringData: {api-key: partner-key-1, email: partner@example.com}
---
apiVersion: v1
kind: Secret
metadata: {name: no-email, namespace: default}
type: extauth.vendor.io/apikey
stringData: {api-key: no-email-key, tier: gold}
"""


def created_key(folder: Path, name: str) -> str:
    manifest = yaml.safe_load(
        (folder / "gwctl-created" / f"secret-gw-system-{name}.yaml").read_text()
    )
    return base64.b64decode(manifest["data"]["api-key"]).decode()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtauthGateway]:
    gateway = ExtauthGateway(tmp_path_factory.mktemp("apikey"))
    try:
        gateway.write("apikey", AUTH_CONFIGS)
        gateway.gw.wait_status("AuthConfig gw-system.by-name", "Accepted")
        # No secret has the label yet: the test makes them with gwctl.
        status = gateway.gw.wait_status("AuthConfig gw-system.by-label", "Warning")
        assert "no secret of type extauth.vendor.io/apikey has these labels" in status["reason"]
        gateway.guard("by-label", "by-label")
        gateway.guard("by-name", "by-name")
        yield gateway
    finally:
        gateway.stop()


def test_keys_made_by_gwctl_and_picked_by_label(env: ExtauthGateway) -> None:
    home = env.gw.home
    made = gwctl(
        home, "create", "secret", "apikey", "infra-apikey", "--apikey", INFRA_KEY,
        "--apikey-labels", "team=infrastructure",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert parse_table(made.stdout) == [{"SECRET": "infra-apikey", "TYPE": "ApiKey"}]
    assert INFRA_KEY not in made.stdout + made.stderr
    generated = gwctl(
        home, "create", "secret", "apikey", "--name", "robot", "--apikey-generate",
        "--apikey-labels", "team=infrastructure",
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    robot_key = created_key(env.folder, "robot")
    assert len(robot_key) >= 32 and robot_key not in generated.stdout + generated.stderr
    missing = gwctl(home, "create", "secret", "apikey", "nothing")
    assert missing.returncode == 1 and "ApiKey not provided or generated" in missing.stderr

    ok = wait_until(
        lambda: (
            (r := env.get("by-label.test", "/posts/1", headers={"api-key": INFRA_KEY}))
            and r.status_code == 200
            and r
        ),
        what="the new key to work",
    )
    assert ok.json()["headers"]["x-user-id"] == "infra-apikey"
    assert "api-key" in ok.json()["headers"]  # the key itself goes on, as it came
    robot = wait_until(
        lambda: env.get("by-label.test", "/", headers={"api-key": robot_key}).status_code == 200,
        what="the generated key to work",
    )
    assert robot
    for headers in ({}, {"api-key": "wrong"}, {"x-partner-key": INFRA_KEY}):
        denied = env.get("by-label.test", "/posts/1", headers=headers)
        assert denied.status_code == 401
        assert denied.headers["www-authenticate"] == DENIED and denied.text == ""


def test_named_secrets_custom_header_and_metadata_headers(env: ExtauthGateway) -> None:
    ok = env.get("by-name.test", "/", headers={"x-partner-key": "partner-key-1"})
    assert ok.status_code == 200
    seen = ok.json()["headers"]
    assert (seen["x-partner-email"], seen["x-user-id"]) == ("partner@example.com", "partner")
    assert "x-partner-tier" not in seen  # not required, and the secret has none
    # `email` is required and this key's secret lacks it: refused.
    assert (
        env.get("by-name.test", "/", headers={"x-partner-key": "no-email-key"}).status_code == 401
    )
    # The keys of one AuthConfig do not open another's host.
    assert env.get("by-label.test", "/", headers={"api-key": "partner-key-1"}).status_code == 401


def test_rotation_without_a_restart(env: ExtauthGateway) -> None:
    """Editing the secret in the folder: the new key works and the old one is refused,
    with the same gw up, Envoy and extauth server running."""
    pid = env.gw.process.popen.pid
    rotated = AUTH_CONFIGS.replace("partner-key-1", "partner-key-2")
    save(env.folder / "apikey.yaml", rotated)
    wait_until(
        lambda: (
            env.get("by-name.test", "/", headers={"x-partner-key": "partner-key-2"}).status_code
            == 200
        ),
        what="the rotated key to work",
    )
    old = env.get("by-name.test", "/", headers={"x-partner-key": "partner-key-1"})
    assert old.status_code == 401
    assert env.gw.process.alive() and env.gw.process.popen.pid == pid
