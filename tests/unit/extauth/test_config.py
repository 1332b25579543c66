"""The xDS contract between the control plane and the extauth server: what the translator
serves is read back into the same dataclasses; anything else is refused (a NACK)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import any_pb2, struct_pb2

from gw.extauth.config import TYPE_URL, parse_resources
from gw.store.directory import DirectoryStore
from gw.translator.translation import translate
from gw.xds.cache import pack_resources

CASES = Path(__file__).resolve().parents[2] / "golden" / "cases"


@pytest.mark.parametrize("case", ["extauth-oidc-redis", "extauth-oidc-cookie"])
def test_served_configs_read_back_unchanged(case: str, tmp_path: Path) -> None:
    (tmp_path / "in.yaml").write_text((CASES / f"{case}.in.yaml").read_text())
    result = translate(DirectoryStore(tmp_path).scan())
    packed = pack_resources(result.extauth.resources)
    resources = [entry.resource for _, entry in packed.select(TYPE_URL, None)]
    configs = parse_resources(resources)
    assert list(configs.values()) == list(result.proxy.auth_configs)
    assert all(c.steps[0].check.client_secret for c in configs.values())  # type: ignore[union-attr]


def test_refuses_what_does_not_fit() -> None:
    bad = struct_pb2.Struct()
    step = {"name": "a", "check": {"kind": "basic", "users": [{"name": "u"}]}}
    bad.update({"config_id": "ns.x", "namespace": "ns", "name": "x", "steps": [step]})
    packed = any_pb2.Any()
    packed.Pack(bad)
    with pytest.raises(ValueError, match="auth config ns.x: steps.0.check"):
        parse_resources([packed])
    other = any_pb2.Any()
    other.Pack(any_pb2.Any())
    with pytest.raises(ValueError, match="not a Struct"):
        parse_resources([other])
