"""`Served`: what one proxy role is served (its Envoy listeners, route configurations,
clusters and endpoints) and where its routes, virtual hosts and clusters were written.

Built from xDS messages as any xDS client receives them (`from_messages`), and from the Proxy
IR as the admin API dumps it (`sources_from_proxy`, which also takes a function that finds a
field's file and line). Nothing here fetches anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.endpoint.v3 import endpoint_pb2
from envoy.config.listener.v3 import listener_pb2
from envoy.config.route.v3 import route_pb2, scoped_route_pb2
from google.protobuf.message import Message


@dataclass(frozen=True, slots=True, kw_only=True)
class Origin:
    """Where something was written: `VirtualService default.shop`, the field path of a
    route's matcher in it, and its file and line when known."""

    resource: str
    field: str = ""
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f" ({self.file}:{self.line})" if self.file and self.line else ""
        where = where or (f" ({self.file})" if self.file else "")
        return f"{self.resource} {self.field}".rstrip() + where


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteSource:
    origin: Origin
    #: The delegating routes that led to it, from the VirtualService's down.
    delegated_by: tuple[Origin, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Sources:
    routes: Mapping[str, RouteSource] = field(default_factory=dict)
    #: Virtual host name → its resource (`VirtualService default.shop`).
    virtual_hosts: Mapping[str, Origin] = field(default_factory=dict)
    #: Cluster name → its resource (`Upstream gw-system.echo`).
    clusters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Served:
    listeners: tuple[listener_pb2.Listener, ...] = ()
    routes: Mapping[str, route_pb2.RouteConfiguration] = field(default_factory=dict)
    #: The scopes of sharded listeners (SRDS), by name.
    scopes: Mapping[str, scoped_route_pb2.ScopedRouteConfiguration] = field(default_factory=dict)
    clusters: Mapping[str, cluster_pb2.Cluster] = field(default_factory=dict)
    endpoints: Mapping[str, endpoint_pb2.ClusterLoadAssignment] = field(default_factory=dict)
    sources: Sources = field(default_factory=Sources)

    @classmethod
    def from_messages(cls, messages: Iterable[Message], sources: Sources | None = None) -> Served:
        listeners, routes, scopes, clusters, endpoints = [], {}, {}, {}, {}
        for message in messages:
            if isinstance(message, listener_pb2.Listener):
                listeners.append(message)
            elif isinstance(message, route_pb2.RouteConfiguration):
                routes[message.name] = message
            elif isinstance(message, scoped_route_pb2.ScopedRouteConfiguration):
                scopes[message.name] = message
            elif isinstance(message, cluster_pb2.Cluster):
                clusters[message.name] = message
            elif isinstance(message, endpoint_pb2.ClusterLoadAssignment):
                endpoints[message.cluster_name] = message
        return cls(
            listeners=tuple(sorted(listeners, key=lambda m: m.name)),
            routes=routes,
            scopes=scopes,
            clusters=clusters,
            endpoints=endpoints,
            sources=sources or Sources(),
        )


#: Finds the file and 1-based line of a field of a resource: (kind, namespace, name, field).
Locate = Callable[[str, str, str, str], tuple[str, int | None] | None]


def sources_from_proxy(proxy: Mapping[str, Any], locate: Locate | None = None) -> Sources:
    """Where the routes, virtual hosts and clusters of a Proxy (IR data, as the admin API's
    `/snapshots/proxies` dumps it) were written."""

    def origin(ref: Mapping[str, Any], where: str = "") -> Origin:
        kind, namespace, name = ref["kind"], ref["namespace"], ref["name"]
        found = locate(kind, namespace, name, where) if locate else None
        return Origin(
            resource=f"{kind} {namespace}.{name}",
            field=where,
            file=found[0] if found else None,
            line=found[1] if found else None,
        )

    routes: dict[str, RouteSource] = {}
    vhosts: dict[str, Origin] = {}
    listeners = list(proxy.get("listeners") or [])
    # A hybrid listener's HTTP parts hold their own virtual hosts.
    listeners += [p["http"] for lis in listeners for p in lis.get("matched") or [] if p.get("http")]
    for listener in listeners:
        for vhost in listener.get("virtual_hosts") or []:
            if vhost.get("source"):
                vhosts[vhost["name"]] = origin(vhost["source"])
            for route in vhost.get("routes") or []:
                source = route.get("source")
                if not source:
                    continue
                routes[route["name"]] = RouteSource(
                    origin=origin(source["resource"], source["field"]),
                    delegated_by=tuple(
                        origin(step["resource"], step["field"])
                        for step in route.get("delegated_by") or []
                    ),
                )
    clusters = {
        c["name"]: f"{c['source']['kind']} {c['source']['namespace']}.{c['source']['name']}"
        for c in proxy.get("clusters") or []
        if c.get("source")
    }
    return Sources(routes=routes, virtual_hosts=vhosts, clusters=clusters)
