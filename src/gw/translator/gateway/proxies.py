"""The placed virtual hosts → one Proxy per proxy name, each with only its gateways.

The proxy `Options.proxy_name` (`gateway-proxy`, the deployment `gw up` and the install
run) always exists, with no listeners when no gateway names it, so that its Envoys stay up
with nothing to serve. Other proxies exist while some gateway names them.

Clusters and secrets: a proxy gets every one except those that only *other* proxies'
listeners use. So one proxy gets them all (as before gateways existed), an upstream no
route uses yet is ready on every proxy, and a reference this module does not know about
(a field not named `cluster`/`*_cluster`, `secret`/`*_secret`) errs on the side of serving
the cluster rather than leaving a proxy without it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from gw.translator import ir
from gw.translator.gateway.gateways import GatewayListener


def build_proxies(
    whole: ir.Proxy,
    by_role: Mapping[str, list[ir.VirtualHost]],
    gateways: tuple[GatewayListener, ...],
) -> tuple[ir.Proxy, ...]:
    """`whole` holds every cluster, secret and AuthConfig, and is named as the default
    proxy; the result has the default proxy first, then the others by name."""
    names = [whole.name]
    names += sorted({p for g in gateways for p in g.proxies} - {whole.name})
    listeners = {name: _listeners(name, by_role, gateways) for name in names}
    if len(names) == 1:
        return (dataclasses.replace(whole, listeners=listeners[whole.name]),)
    uses = {name: _uses(listeners[name], whole.clusters) for name in names}
    out = []
    for name in names:
        own_clusters, own_secrets = uses[name]
        other_clusters = {c for n, (cs, _) in uses.items() if n != name for c in cs}
        other_secrets = {s for n, (_, ss) in uses.items() if n != name for s in ss}
        foreign_clusters = other_clusters - own_clusters
        foreign_secrets = other_secrets - own_secrets
        out.append(
            dataclasses.replace(
                whole,
                name=name,
                listeners=listeners[name],
                clusters=tuple(c for c in whole.clusters if c.name not in foreign_clusters),
                secrets=tuple(s for s in whole.secrets if s.name not in foreign_secrets),
            )
        )
    return tuple(out)


def _listeners(
    proxy: str,
    by_role: Mapping[str, list[ir.VirtualHost]],
    gateways: tuple[GatewayListener, ...],
) -> tuple[ir.Listener, ...]:
    out = []
    for g in gateways:
        vhosts = by_role.get(g.role, [])
        if proxy in g.proxies and (vhosts or g.keep_empty):
            out.append(
                ir.Listener(
                    name=g.name,
                    address=g.address,
                    port=g.port,
                    virtual_hosts=tuple(sorted(vhosts, key=lambda v: v.name)),
                    gateway=g.source,
                    http=g.http,
                    options=g.options,
                )
            )
    return tuple(out)


def _uses(
    listeners: tuple[ir.Listener, ...], clusters: tuple[ir.Cluster, ...]
) -> tuple[set[str], set[str]]:
    """The cluster and secret names the listeners use, with the secrets of those clusters."""
    cluster_names: set[str] = set()
    secret_names: set[str] = set()
    _walk(listeners, cluster_names, secret_names, set())
    used = [c for c in clusters if c.name in cluster_names]
    _walk(used, set(), secret_names, set())
    return cluster_names, secret_names


def _walk(value: Any, clusters: set[str], secrets: set[str], seen: set[int]) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if id(value) in seen:
            return
        seen.add(id(value))
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if isinstance(item, str):
                _note(f.name, item, clusters, secrets)
            elif item is not None:
                _walk(item, clusters, secrets, seen)
    elif isinstance(value, Mapping):
        _walk(list(value.values()), clusters, secrets, seen)
    elif isinstance(value, Iterable) and not isinstance(value, str | bytes):
        for item in value:
            _walk(item, clusters, secrets, seen)


def _note(field: str, value: str, clusters: set[str], secrets: set[str]) -> None:
    if field == "cluster" or field.endswith("_cluster"):
        clusters.add(value)
    elif field == "secret" or field.endswith("_secret"):
        secrets.add(value)
