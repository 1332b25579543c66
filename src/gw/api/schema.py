"""JSON schemas of the resource kinds, generated from the models (never kept by hand).

Editors validate manifests with them (`# yaml-language-server: $schema=...`), CI can check a
folder with any JSON-schema tool, and the orchestrator's CRDs are derived from the same
models. `gw schema` prints them; `schemas/` in the repository holds the current ones.
"""

from __future__ import annotations

from typing import Any

from gw.api import KINDS, ORCH_KINDS
from gw.api.meta import Resource


def json_schema(kind: type[Resource]) -> dict[str, Any]:
    schema = kind.model_json_schema(by_alias=True, mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = kind.KIND
    properties = schema["properties"]
    properties["apiVersion"] = {"type": "string", "const": kind.API_VERSION}
    properties["kind"] = {"type": "string", "const": kind.KIND}
    return schema


def all_schemas() -> dict[str, dict[str, Any]]:
    """Schema by kind name, for every kind gw reads, but the orchestrator's Service,
    Endpoints and Pod: the orchestrator publishes their schemas, gw reads only part of them."""
    return {kind.KIND: json_schema(kind) for kind in KINDS if kind not in ORCH_KINDS}
