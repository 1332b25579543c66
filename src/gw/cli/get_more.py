"""`gwctl get authconfig|ratelimitconfig|settings|secret|service|endpoints|pod [NAME]`: the
kinds the routing tables do not show, so that `get` covers every kind gw reads.

AuthConfigs and secrets follow the established tables (`AUTHCONFIG | TYPE`, `SECRET | TYPE`,
REFERENCE.md §7.3) with a STATUS column added: an AuthConfig has a status, and a secret the
store could not read is listed Rejected with the reason (secret values are never shown: the
admin API redacts them). Settings, services, endpoints and pods (the last three are what
discovery reads in a folder install) get short tables of their own. The commands join the
`gwctl get` group (`get.app`).
"""

from __future__ import annotations

from typing import Any

from gw.cli.get import register, state_text
from gw.cli.tables import render_table

__all__ = ["authconfig_table", "secret_table"]

#: AuthConfig `configs[]` entries by their field, as the established table names them.
AUTH_TYPES = {
    "oauth2": "Oauth",
    "basicAuth": "Basic Auth",
    "apiKeyAuth": "ApiKey",
    "pluginAuth": "Plugin",
    "opaAuth": "OPA",
    "ldap": "LDAP",
    "passThroughAuth": "Passthrough GRPC",
    "hmacAuth": "HMAC",
}
SECRET_TYPES = {
    "kubernetes.io/tls": "TLS",
    "extauth.vendor.io/oauth": "OAuth",
    "extauth.vendor.io/apikey": "ApiKey",
    "extauth.vendor.io/accountcredentials": "AccountCredentials",
    "gw.vendor.io/header": "Header",
    "gw.vendor.io.EncryptionKeySecret": "EncryptionKey",
}


def authconfig_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        types = [
            AUTH_TYPES.get(field, field)
            for entry in r.get("spec", {}).get("configs") or []
            for field in entry
            if field != "name"
        ]
        rows.append([r["metadata"]["name"], ",".join(types) or "N/A", state_text(r)])
    return render_table(["AuthConfig", "Type", "Status"], rows)


def secret_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        kind = r.get("type", "")
        status = state_text(r) if "status" in r else ""
        rows.append([r["metadata"]["name"], SECRET_TYPES.get(kind, kind), status])
    return render_table(["Secret", "Type", "Status"], rows)


def settings_table(resources: list[dict[str, Any]]) -> str:
    rows = [
        [
            f"{r['metadata']['namespace']}.{r['metadata']['name']}",
            state_text(r),
            "\n".join(sorted(r.get("spec", {}))),
        ]
        for r in resources
    ]
    return render_table(["Settings", "Status", "Sets"], rows)


def service_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        spec = r.get("spec", {})
        ports = [
            f"{p.get('name', '')}:{p.get('port', '')}".lstrip(":") for p in spec.get("ports") or []
        ]
        selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items()))
        rows.append([r["metadata"]["name"], r["metadata"]["namespace"], "\n".join(ports), selector])
    return render_table(["Service", "Namespace", "Ports", "Selector"], rows)


def endpoints_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        addresses = [
            f"{a.get('ip', '')}:{p.get('port', '')}"
            for subset in r.get("subsets") or []
            for a in subset.get("addresses") or []
            for p in subset.get("ports") or []
        ]
        rows.append([r["metadata"]["name"], r["metadata"]["namespace"], "\n".join(addresses)])
    return render_table(["Endpoints", "Namespace", "Addresses"], rows)


def pod_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        labels = r["metadata"].get("labels") or {}
        rows.append(
            [
                r["metadata"]["name"],
                r["metadata"]["namespace"],
                str((r.get("status") or {}).get("podIP", "")),
                "\n".join(f"{k}={v}" for k, v in sorted(labels.items())),
            ]
        )
    return render_table(["Pod", "Namespace", "IP", "Labels"], rows)


def configmap_table(resources: list[dict[str, Any]]) -> str:
    rows = [
        [r["metadata"]["name"], r["metadata"]["namespace"], "\n".join(sorted(r.get("data") or {}))]
        for r in resources
    ]
    return render_table(["Config Map", "Namespace", "Keys"], rows)


def ratelimitconfig_table(resources: list[dict[str, Any]]) -> str:
    rows = []
    for r in resources:
        raw = r.get("spec", {}).get("raw") or {}
        descriptors = [
            d.get("key", "") + (f"={d['value']}" if "value" in d else "")
            for d in raw.get("descriptors") or []
        ]
        rows.append([r["metadata"]["name"], state_text(r), "\n".join(descriptors)])
    return render_table(["Rate Limit Config", "Status", "Descriptors"], rows)


register(
    "RateLimitConfig",
    ("ratelimitconfig", "ratelimitconfigs", "rlc"),
    "List rate limit configs with status and their top-level descriptors.",
    ratelimitconfig_table,
)


register(
    "AuthConfig",
    ("authconfig", "authconfigs", "ac"),
    "List auth configs with their types and status.",
    authconfig_table,
)
register(
    "Settings",
    ("settings", "st"),
    "List Settings with their status and what they set.",
    settings_table,
)
register(
    "Secret",
    ("secret", "secrets"),
    "List secrets with their type (values are never shown).",
    secret_table,
)
register(
    "Service",
    ("service", "services", "svc"),
    "List services (what discovery reads) with their ports and selector.",
    service_table,
)
register(
    "Endpoints",
    ("endpoints", "ep"),
    "List endpoints (what discovery reads) with their addresses.",
    endpoints_table,
)
register("Pod", ("pods", "pod", "po"), "List pods (what discovery reads) with their IP.", pod_table)
register(
    "ConfigMap",
    ("configmap", "configmaps", "cm"),
    "List config maps (opaAuth reads its Rego modules there) with their keys.",
    configmap_table,
)
