"""CustomResourceDefinitions of gw's kinds, generated from the models (never kept by hand).

The orchestrator needs *structural* OpenAPI v3 schemas: no `$ref`, no `anyOf` with `null`,
a `type` on every node. The models' JSON schemas (`schema.py`) are turned into that form:
references are inlined, `X | None` becomes `X` with `nullable: true`, free-form values
(`Any`, `dict[str, Any]`) keep unknown fields (`x-kubernetes-preserve-unknown-fields`), and
defaults are dropped (gw applies them when it reads a resource, so stored objects stay as the
user wrote them). The schema refuses unknown fields by pruning them; gw's own parser (and the
validation webhook) reports them with their path.

`gw crds` prints them; `deploy/crds/` and the Helm chart's `crds/` hold the current ones.
"""

from __future__ import annotations

from typing import Any

from gw.api.authconfig import AuthConfig
from gw.api.gateway import Gateway
from gw.api.http_listener_option import HttpListenerOption
from gw.api.matchable import MatchableHttpGateway, MatchableTcpGateway
from gw.api.meta import Resource
from gw.api.options import RouteOption, VirtualHostOption
from gw.api.proxy import Proxy
from gw.api.ratelimit import RateLimitConfig
from gw.api.routetable import RouteTable
from gw.api.settings import Settings
from gw.api.status import NamespacedStatuses
from gw.api.upstream import Upstream
from gw.api.upstreamgroup import UpstreamGroup
from gw.api.virtualservice import VirtualService

#: The kinds the orchestrator stores as custom resources.
CRD_KINDS: tuple[type[Resource], ...] = (
    VirtualService,
    Gateway,
    MatchableHttpGateway,
    MatchableTcpGateway,
    RouteTable,
    VirtualHostOption,
    RouteOption,
    HttpListenerOption,
    Upstream,
    UpstreamGroup,
    AuthConfig,
    RateLimitConfig,
    Settings,
    Proxy,
)

#: The namespace whose status the printer columns show (the controller's; REFERENCE §2.1).
STATUS_NAMESPACE = "gw-system"
_STATE = f".status.statuses.{STATUS_NAMESPACE}.state"

#: `kubectl get` columns, matching `gwctl get` where a JSONPath can say it (kubectl cannot
#: compute a column, so Upstream shows its service or hosts instead of gwctl's TYPE).
PRINTER_COLUMNS: dict[str, list[dict[str, Any]]] = {
    "VirtualService": [
        {"name": "Domains", "type": "string", "jsonPath": ".spec.virtualHost.domains"},
        {"name": "SSL", "type": "string", "jsonPath": ".spec.sslConfig.secretRef.name"},
        {"name": "Status", "type": "string", "jsonPath": _STATE},
    ],
    "Upstream": [
        {"name": "Service", "type": "string", "jsonPath": ".spec.orch.serviceName"},
        {"name": "Port", "type": "integer", "jsonPath": ".spec.orch.servicePort"},
        {"name": "Hosts", "type": "string", "jsonPath": ".spec.static.hosts[*].addr"},
        {"name": "Status", "type": "string", "jsonPath": _STATE},
    ],
    "Gateway": [
        {"name": "Address", "type": "string", "jsonPath": ".spec.bindAddress"},
        {"name": "Port", "type": "integer", "jsonPath": ".spec.bindPort"},
        {"name": "SSL", "type": "boolean", "jsonPath": ".spec.ssl"},
        {"name": "Status", "type": "string", "jsonPath": _STATE},
    ],
    "Proxy": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "RouteTable": [
        {"name": "Weight", "type": "integer", "jsonPath": ".spec.weight"},
        {"name": "Status", "type": "string", "jsonPath": _STATE},
    ],
    "VirtualHostOption": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "RouteOption": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "MatchableHttpGateway": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "MatchableTcpGateway": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "HttpListenerOption": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "UpstreamGroup": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "AuthConfig": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "RateLimitConfig": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
    "Settings": [{"name": "Status", "type": "string", "jsonPath": _STATE}],
}
_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

#: Keywords a structural schema may carry over from the JSON schema as they are.
_KEPT = (
    "description",
    "enum",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_FREE_FORM = {"x-kubernetes-preserve-unknown-fields": True}


def group_of(kind: type[Resource]) -> str:
    return kind.API_VERSION.split("/")[0]


def version_of(kind: type[Resource]) -> str:
    return kind.API_VERSION.split("/")[1]


def crd_name(kind: type[Resource]) -> str:
    return f"{kind.PLURAL}.{group_of(kind)}"


def crd(kind: type[Resource]) -> dict[str, Any]:
    """The CustomResourceDefinition of one kind."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name(kind), "labels": {"app": "gw", "gw": "crd"}},
        "spec": {
            "group": group_of(kind),
            "names": {
                "kind": kind.KIND,
                "listKind": f"{kind.KIND}List",
                "plural": kind.PLURAL,
                "singular": kind.KIND.lower(),
                "shortNames": list(kind.SHORT_NAMES),
                "categories": ["gw"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": version_of(kind),
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": open_api_schema(kind)},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [*PRINTER_COLUMNS[kind.KIND], _AGE],
                }
            ],
        },
    }


def all_crds() -> dict[str, dict[str, Any]]:
    """CRD by its name (`virtualservices.gateway.vendor.io`), in `CRD_KINDS` order."""
    return {crd_name(kind): crd(kind) for kind in CRD_KINDS}


def open_api_schema(kind: type[Resource]) -> dict[str, Any]:
    """The structural schema of a whole object: apiVersion, kind, metadata, spec, status."""
    source = kind.model_json_schema(by_alias=True, mode="validation")
    defs = source.get("$defs", {})
    spec = structural(source["properties"]["spec"], defs)
    status = NamespacedStatuses.model_json_schema(by_alias=True, mode="validation")
    schema: dict[str, Any] = {
        "type": "object",
        "description": f"{kind.KIND} ({kind.API_VERSION}).",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": structural(status, status.get("$defs", {})),
        },
    }
    if "spec" in source.get("required", []):
        schema["required"] = ["spec"]
    return schema


def structural(node: dict[str, Any], defs: dict[str, Any], path: tuple[str, ...] = ()) -> Any:
    """One JSON-schema node in structural form. `path` holds the definitions being inlined:
    a definition met again inside itself (a recursive type) is cut to a free-form object."""
    ref = node.get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        if name in path:
            return {"type": "object", **_FREE_FORM}
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return structural(merged, defs, (*path, name))
    choices = node.get("anyOf")
    if choices is not None:
        return _union(node, choices, defs, path)
    out: dict[str, Any] = {k: node[k] for k in _KEPT if k in node}
    if "const" in node:
        out["enum"] = [node["const"]]
    kind = node.get("type")
    if kind is None:
        return {**out, **_FREE_FORM}
    out["type"] = kind
    if kind == "object":
        out.update(_object(node, defs, path))
    elif kind == "array":
        out["items"] = structural(node.get("items", {}), defs, path)
    return out


def _object(node: dict[str, Any], defs: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    properties = node.get("properties")
    extra = node.get("additionalProperties")
    out: dict[str, Any] = {}
    if properties is not None:
        out["properties"] = {k: structural(v, defs, path) for k, v in properties.items()}
        required = [r for r in node.get("required", []) if r in properties]
        if required:
            out["required"] = required
    elif isinstance(extra, dict) and extra:
        out["additionalProperties"] = structural(extra, defs, path)
    else:  # `dict[str, Any]`: any keys, any values
        out.update(_FREE_FORM)
    return out


def _union(
    node: dict[str, Any], choices: list[dict[str, Any]], defs: dict[str, Any], path: tuple[str, ...]
) -> Any:
    """`X | None` → X, nullable. Any other union is free-form (the models have none now)."""
    present = [c for c in choices if c.get("type") != "null"]
    nullable = len(present) < len(choices)
    if len(present) != 1:
        return {**_FREE_FORM, **({"nullable": True} if nullable else {})}
    inner = structural(present[0], defs, path)
    if "description" in node:
        inner = {**inner, "description": node["description"]}
    return {**inner, "nullable": True} if nullable else inner


def render(definition: dict[str, Any]) -> str:
    """One CRD as the YAML document committed under `deploy/crds/`."""
    import yaml

    header = "# Generated by `gw crds` from the resource models: do not edit.\n"
    return header + yaml.safe_dump(definition, sort_keys=False, default_flow_style=False)
