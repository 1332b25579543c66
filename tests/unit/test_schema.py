"""The committed JSON schemas are current, and they accept and refuse what the models do."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from gw.api.schema import all_schemas

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", sorted(all_schemas()))
def test_committed_schema_is_current(kind: str) -> None:
    committed = ROOT / "schemas" / f"{kind}.json"
    assert committed.exists(), "run `gw schema --out schemas`"
    assert json.loads(committed.read_text()) == all_schemas()[kind], (
        f"schemas/{kind}.json is stale: run `gw schema --out schemas`"
    )


def test_examples_validate_against_their_schema() -> None:
    schemas = all_schemas()
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") in schemas:
                jsonschema.validate(doc, schemas[doc["kind"]])


def test_schema_refuses_unknown_fields_and_wrong_kinds() -> None:
    schema = all_schemas()["VirtualService"]
    good = {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": "x"},
        "spec": {"virtualHost": {"domains": ["*"]}},
    }
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError, match="Additional properties"):
        jsonschema.validate({**good, "spec": {"virtualHost": {"domain": ["*"]}}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "apiVersion": "gateway.vendor.io/v2"}, schema)
