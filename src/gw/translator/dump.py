"""Plain-data views of translator output, for goldens, the admin API and `gwctl`.

Key material is redacted: these views end up in terminals, logs and bug reports.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import Xds

REDACTED = "<redacted>"
_SECRET_FIELDS = frozenset({"private_key", "client_secret", "password", "hmac_secret"})


def proxy_to_data(proxy: ir.Proxy) -> dict[str, Any]:
    data: dict[str, Any] = redact(_drop_empty(dataclasses.asdict(proxy)))
    if not data.get("auth_configs"):
        data.pop("auth_configs", None)  # most proxies have none: keep their dumps short
    if not data.get("rate_limit_configs"):
        data.pop("rate_limit_configs", None)
    return data


def message_to_data(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = redact(
        json_format.MessageToDict(message, preserving_proto_field_name=True)
    )
    return data


def xds_to_data(xds: Xds) -> dict[str, list[dict[str, Any]]]:
    """Resources by short type name (`listeners`, `routes`, ...), each as plain data."""
    out: dict[str, list[dict[str, Any]]] = {}
    for type_url, by_name in xds.resources.items():
        if by_name:
            out[short_type(type_url)] = [message_to_data(m) for m in by_name.values()]
    return out


def ratelimit_to_data(xds: Xds) -> dict[str, list[dict[str, Any]]]:
    """What the rate-limit servers are served (Structs, like AuthConfigs: named here)."""
    configs = [message_to_data(m) for by_name in xds.resources.values() for m in by_name.values()]
    return {"rateLimitConfigs": configs} if configs else {}


def short_type(type_url: str) -> str:
    return {
        "Listener": "listeners",
        "RouteConfiguration": "routes",
        "Cluster": "clusters",
        "ClusterLoadAssignment": "endpoints",
        "Secret": "secrets",
        "Struct": "authConfigs",
    }.get(type_url.rsplit(".", 1)[-1], type_url.rsplit("/", 1)[-1])


def redact(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: (REDACTED if k in _SECRET_FIELDS else redact(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [redact(v) for v in data]
    return data


def _drop_empty(data: Any) -> Any:
    """Leave out None values so that goldens show what is set, not every default."""
    if isinstance(data, dict):
        return {k: _drop_empty(v) for k, v in data.items() if v is not None}
    if isinstance(data, list | tuple):
        return [_drop_empty(v) for v in data]
    return data
