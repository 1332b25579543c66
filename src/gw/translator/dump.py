"""Plain-data views of translator output, for goldens, the admin API and `gwctl`.

Key material is redacted: these views end up in terminals, logs and bug reports.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from gw.api.status import Status
from gw.translator import ir
from gw.translator.envoy import Xds, protos
from gw.translator.envoy.azure import SECRET_HEADERS

REDACTED = "<redacted>"
#: Secret values by field name, wherever they sit (the extauth contract's too: basic-auth
#: salts and hashes, API key digests and the secret values copied into headers; AWS
#: credentials; Azure function keys).
_SECRET_FIELDS = frozenset(
    {
        "function_key",
        "private_key",
        "client_secret",
        "password",
        "hmac_secret",
        "secret_access_key",
        "session_token",
        "salt",
        "hashed_password",
        "api_key_sha256",
        "secret_data",
        "signing_key",
        "cipher_key",
    }
)


def proxy_to_data(proxy: ir.Proxy) -> dict[str, Any]:
    data: dict[str, Any] = redact(_drop_empty(dataclasses.asdict(proxy)))
    if not data.get("auth_configs"):
        data.pop("auth_configs", None)  # most proxies have none: keep their dumps short
    if not data.get("rate_limit_configs"):
        data.pop("rate_limit_configs", None)
    for listener in data.get("listeners", []):
        _drop_no_parts(listener)
    return data


#: Listener plugins whose unset values are left out, so that dumps without them stay short.
_QUIET_PLUGINS: tuple[tuple[str, object], ...] = (
    ("ext_proc", []),
    ("sanitize_cluster_header", False),
)


def _drop_no_parts(listener: dict[str, Any]) -> None:
    """Only hybrid listeners have parts: the others' dumps stay as they were."""
    plugins = listener.get("plugins") or {}
    for name, unset in _QUIET_PLUGINS:
        if plugins.get(name, unset) == unset:
            plugins.pop(name, None)
    if not listener.get("matched"):
        listener.pop("matched", None)
    for part in listener.get("matched", []):
        if part.get("http") is not None:
            _drop_no_parts(part["http"])


def message_to_data(message: Message) -> dict[str, Any]:
    """The message as plain data, redacted; read as `protos.POOL` defines it, so that the
    fields the generated protos lack show too (a health check's `name`)."""
    data: dict[str, Any] = redact(
        json_format.MessageToDict(
            protos.readable(message), preserving_proto_field_name=True, descriptor_pool=protos.POOL
        )
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
        if str(data.get("key", "")).lower() in SECRET_HEADERS and "value" in data:
            data = {**data, "value": REDACTED}
        data = without_secret_header_value(data)
        data = without_symmetric_jwks(data)
        # An unset secret field stays null: the dump still tells whether one is set.
        return {
            k: (REDACTED if k in _SECRET_FIELDS and v is not None else redact(v))
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact(v) for v in data]
    return data


def without_secret_header_value(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with the value of a header from a secret hidden: an IR header names its
    secret; Envoy's carries `keep_empty_value` (`envoy/headers.py`)."""
    if data.get("secret") and "value" in data and "name" in data:
        return {**data, "value": REDACTED}
    header = data.get("header")
    if data.get("keep_empty_value") and isinstance(header, dict) and "value" in header:
        return {**data, "header": {**header, "value": REDACTED}}
    return data


def without_symmetric_jwks(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with an inline JWKS of symmetric keys (session pass keys, in Envoy's
    `jwt_authn` providers) hidden; public key sets stay readable."""
    if '"kty":"oct"' in str(data.get("local_jwks", "")):
        return {**data, "local_jwks": REDACTED}
    return data


def hide_key_material(data: Any) -> Any:
    """Session pass keys and the values of headers from secrets hidden all the way down
    (Envoy's own `/config_dump`, which redacts private keys itself)."""
    if isinstance(data, dict):
        shown = without_secret_header_value(without_symmetric_jwks(data))
        return {k: hide_key_material(v) for k, v in shown.items()}
    if isinstance(data, list):
        return [hide_key_material(v) for v in data]
    return data


def _drop_empty(data: Any) -> Any:
    """Leave out None values so that goldens show what is set, not every default."""
    if isinstance(data, dict):
        return {k: _drop_empty(v) for k, v in data.items() if v is not None}
    if isinstance(data, list | tuple):
        return [_drop_empty(v) for v in data]
    return data


def proxy_resource(proxy: ir.Proxy, status: Status | None = None) -> dict[str, Any]:
    """The Proxy as a resource (`gw.vendor.io/v1`, REFERENCE.md §1.10): listeners with
    their bind address and port, virtual hosts and routes, TLS configurations, and
    `metadataStatic` naming the resources each element came from."""
    out: dict[str, Any] = {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Proxy",
        "metadata": {"name": proxy.name, "namespace": proxy.namespace},
        "spec": {"listeners": [_listener_data(listener) for listener in proxy.listeners]},
    }
    if status is not None:
        statuses = {proxy.namespace: status.model_dump(by_alias=True, exclude_defaults=True)}
        out["status"] = {"statuses": statuses}
    return out


def _listener_data(listener: ir.Listener) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": listener.name,
        "bindAddress": listener.address,
        "bindPort": listener.port,
    }
    if listener.tcp is not None:
        data["tcpListener"] = _tcp_data(listener.tcp)
    elif listener.matched:
        data["hybridListener"] = {"matchedListeners": [_matched_data(m) for m in listener.matched]}
    else:
        data.update(_http_data(listener))
    if listener.gateway is not None:
        data["metadataStatic"] = _sources(listener.gateway)
    return data


def _http_data(listener: ir.Listener) -> dict[str, Any]:
    vhosts = listener.virtual_hosts
    data: dict[str, Any] = {"httpListener": {"virtualHosts": [_vhost_data(v) for v in vhosts]}}
    ssl = [_camel(_plain(dataclasses.asdict(v.tls))) for v in vhosts if v.tls is not None]
    if ssl:
        data["sslConfigurations"] = ssl
    return data


def _tcp_data(tcp: ir.TcpListener) -> dict[str, Any]:
    data: dict[str, Any] = _camel(_plain(dataclasses.asdict(tcp)))
    data["tcpHosts"] = data.pop("hosts", [])
    return data


def _matched_data(matched: ir.MatchedListener) -> dict[str, Any]:
    ranges = [{"addressPrefix": a, "prefixLen": n} for a, n in matched.match.source_ranges]
    data: dict[str, Any] = {"matcher": {"sourcePrefixRanges": ranges} if ranges else {}}
    if matched.http is not None:
        data.update(_http_data(matched.http))
    if matched.tcp is not None:
        data["tcpListener"] = _tcp_data(matched.tcp)
    if matched.source is not None:
        data["metadataStatic"] = _sources(matched.source)
    return data


def _vhost_data(vhost: ir.VirtualHost) -> dict[str, Any]:
    data: dict[str, Any] = _camel(_plain(dataclasses.asdict(vhost)))
    data.pop("source", None)
    data.pop("tls", None)  # in the listener's sslConfigurations
    data["metadataStatic"] = _sources(vhost.source)
    return data


def _sources(source: ir.SourceRef) -> dict[str, Any]:
    return {
        "sources": [
            {
                "resourceKind": f"*v1.{source.kind}",
                "resourceRef": {"name": source.name, "namespace": source.namespace},
            }
        ]
    }


def _plain(data: Any) -> Any:
    """Redacted, without None values or empty collections."""
    data = redact(_drop_empty(data))
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items() if v not in ({}, [], ())}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    return data


def _camel(data: Any) -> Any:
    """snake_case keys → lowerCamelCase, as resources spell their fields."""
    if isinstance(data, dict):
        return {_camel_key(k): _camel(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_camel(v) for v in data]
    return data


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
