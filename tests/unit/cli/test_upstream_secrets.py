"""`gwctl create secret header|aws|azure`: the secrets they write are the ones the
translator reads (the manifest is captured before it is written; `--dry-run` redacts it).
A header secret through a real gw up and Envoy: tests/e2e/test_header_secrets.py."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gw.api.secret import HEADER_TYPE
from gw.cli import create
from gw.cli.gwctl import app
from gw.translator.gateway import aws, azure

runner = CliRunner()


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The manifests the commands would write."""
    out: list[dict[str, Any]] = []

    def capture(manifest: dict[str, Any], *_: Any) -> None:
        out.append(manifest)

    monkeypatch.setattr(create, "create_resource", capture)
    return out


def decoded(manifest: dict[str, Any]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in manifest["data"].items()}


def test_header_secret_holds_one_key_per_header(written: list[dict[str, Any]]) -> None:
    made = runner.invoke(
        app, ["create", "secret", "header", "h", "--headers", "x-a=1,x-b=two=2", "-n", "team"]
    )
    assert made.exit_code == 0, made.output
    [manifest] = written
    assert (manifest["type"], manifest["metadata"]) == (
        HEADER_TYPE,
        {"name": "h", "namespace": "team"},
    )
    assert decoded(manifest) == {"x-a": "1", "x-b": "two=2"}
    from_stdin = runner.invoke(
        app,
        ["create", "secret", "header", "--name", "s", "--headers", "-"],
        input="x-c=3\n\nx-d=4\n",
    )
    assert from_stdin.exit_code == 0, from_stdin.output
    assert decoded(written[1]) == {"x-c": "3", "x-d": "4"}


def test_aws_and_azure_secrets_have_the_keys_their_upstreams_read(
    written: list[dict[str, Any]],
) -> None:
    made = runner.invoke(
        app,
        ["create", "secret", "aws", "creds", "--access-key", "AKIA1", "--secret-key", "-",
         "--session-token", "tok"],
        input="s3cret\n",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert decoded(written[0]) == {
        aws.ACCESS_KEY: "AKIA1",
        aws.SECRET_KEY: "s3cret",
        aws.SESSION_TOKEN: "tok",
    }
    made = runner.invoke(
        app, ["create", "secret", "azure", "keys", "--api-keys", "hello=k1,_master=k0"]
    )
    assert made.exit_code == 0, made.output
    stored = decoded(written[1])[azure.SECRET_KEY]
    assert yaml.safe_load(stored) == {"apiKeys": {"hello": "k1", "_master": "k0"}}
    assert written[1]["type"] == written[0]["type"] == "Opaque"


def test_dry_runs_redact_and_refusals_say_what_is_missing() -> None:
    dry = runner.invoke(
        app, ["create", "secret", "header", "h", "--headers", "x-token=s3cret", "--dry-run"]
    )
    assert dry.exit_code == 0, dry.output
    assert yaml.safe_load(dry.stdout)["data"] == {"x-token": "<redacted>"}
    assert "s3cret" not in dry.output
    refusals = {
        ("header", "h"): "Error: headers not provided: give --headers name=value,...\n",
        ("header", "h", "--headers", "x-a"): "Error: --headers: 'x-a' is not key=value\n",
        ("header", "--headers", "x=1"): (
            "Error: name the secret: gwctl create secret header NAME (or --name NAME)\n"
        ),
        ("aws", "a", "--secret-key", "s"): "Error: access key not provided: give --access-key\n",
        ("aws", "a", "--access-key", "k"): (
            "Error: secret key not provided: give --secret-key (or --secret-key - to read stdin)\n"
        ),
        ("azure", "z"): "Error: api keys not provided: give --api-keys function=key,...\n",
    }
    for args, error in refusals.items():
        result = runner.invoke(app, ["create", "secret", *args, "--dry-run"])
        assert (result.exit_code, result.stderr) == (1, error), args


def test_encryption_key_secret_holds_32_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """`create secret encryptionkey`: the key an OIDC cookie session's cipherConfig reads."""

    from gw.translator.gateway.sessions import CIPHER_KEY_BYTES, ENCRYPTION_KEY

    captured: list[dict[str, Any]] = []
    monkeypatch.setattr(create, "create_resource", lambda manifest, *_: captured.append(manifest))
    key = "an example of an encryption key1"
    made = runner.invoke(app, ["create", "secret", "encryptionkey", "--name", "k", "--key", key])
    assert made.exit_code == 0, made.output
    assert captured[0]["type"] == "gw.vendor.io.EncryptionKeySecret"
    assert decoded(captured[0]) == {ENCRYPTION_KEY: key} and len(key) == CIPHER_KEY_BYTES
    short = runner.invoke(app, ["create", "secret", "encryptionkey", "k", "--key", "short"])
    assert (short.exit_code, short.stderr) == (
        1,
        "Error: The length of the key is not 32 bytes in length (it is 5)\n",
    )
    missing = runner.invoke(app, ["create", "secret", "encryptionkey", "k"])
    assert missing.stderr == (
        "Error: The Name or the key is missing for the encryption secret: give --key\n"
    )
