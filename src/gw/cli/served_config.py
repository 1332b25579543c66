"""What the control plane serves a proxy role, fetched the way a proxy fetches it: as an
xDS client on the ADS port, announcing the role in its node metadata (REFERENCE.md §7.4).

Going through xDS rather than the admin API shows exactly what a proxy would receive:
CDS and LDS (wildcard), then EDS for the clusters that use it and RDS for the route
configurations the listeners name, and the names of the secrets (SDS). Secret contents are
never fetched into the output: only their names and what they hold.
"""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import base_pb2
from envoy.config.endpoint.v3 import endpoint_pb2
from envoy.config.listener.v3 import listener_pb2
from envoy.config.route.v3 import route_pb2, scoped_route_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.extensions.transport_sockets.tls.v3 import secret_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from gw.translator.dump import message_to_data
from gw.translator.envoy import names

CDS = names.CLUSTER
EDS = names.ENDPOINT
LDS = names.LISTENER
RDS = names.ROUTE
SRDS = names.SCOPED_ROUTE
SDS = names.SECRET

MESSAGES: dict[str, Callable[[], Message]] = {
    CDS: cluster_pb2.Cluster,
    EDS: endpoint_pb2.ClusterLoadAssignment,
    LDS: listener_pb2.Listener,
    RDS: route_pb2.RouteConfiguration,
    SRDS: scoped_route_pb2.ScopedRouteConfiguration,
    SDS: secret_pb2.Secret,
}

#: Output sections, in the established tool's order (`scopedRoutes`, the scopes of a sharded
#: listener, and `secrets` are gw's additions).
SECTIONS = ("clusters", "eds", "listeners", "rds", "scopedRoutes", "secrets")


class ServedConfigError(Exception):
    pass


def fetch(address: str, role: str, timeout: float = 5.0) -> dict[str, list[Any]]:
    """The resources served to `role`, as plain data by section."""
    received = fetch_messages(address, role, timeout)
    return {
        "clusters": [message_to_data(m) for m in received.get(CDS, [])],
        "eds": [message_to_data(m) for m in received.get(EDS, [])],
        "listeners": [message_to_data(m) for m in received.get(LDS, [])],
        "rds": [message_to_data(m) for m in received.get(RDS, [])],
        "scopedRoutes": [message_to_data(m) for m in received.get(SRDS, [])],
        "secrets": [_secret_summary(m) for m in received.get(SDS, [])],
    }


def fetch_messages(address: str, role: str, timeout: float = 5.0) -> dict[str, list[Any]]:
    """The resources served to `role`, as messages by type URL."""
    deadline = time.monotonic() + timeout
    requests: queue.Queue[discovery_pb2.DiscoveryRequest | None] = queue.Queue()
    node = base_pb2.Node(
        id=f"gwctl-served-config-{os.getpid()}",
        cluster="gwctl",
        metadata=struct_pb2.Struct(fields={"role": struct_pb2.Value(string_value=role)}),
    )
    requests.put(discovery_pb2.DiscoveryRequest(type_url=CDS, node=node))
    requests.put(discovery_pb2.DiscoveryRequest(type_url=LDS))
    requests.put(discovery_pb2.DiscoveryRequest(type_url=SDS, resource_names=["*"]))
    received: dict[str, list[Any]] = {}
    wanted = {CDS, LDS, SDS}
    channel = grpc.insecure_channel(address)
    try:
        stub = ads_pb2_grpc.AggregatedDiscoveryServiceStub(channel)
        stream = stub.StreamAggregatedResources(_drain(requests), timeout=timeout)
        for response in stream:
            messages = [_unpack(response.type_url, r) for r in response.resources]
            received[response.type_url] = messages
            wanted.discard(response.type_url)
            follow_up = _follow_up(response.type_url, received)
            if follow_up is not None:
                wanted.add(follow_up.type_url)
                requests.put(follow_up)
            if not wanted or time.monotonic() > deadline:
                break
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise ServedConfigError(
                f"timed out after {timeout:g}s waiting for the control plane's xDS server "
                f"at {address} to serve role {role}"
            ) from None
        raise ServedConfigError(f"cannot fetch from the xDS server at {address}: {exc}") from None
    finally:
        requests.put(None)
        channel.close()
    if wanted:
        raise ServedConfigError(f"the xDS server at {address} serves nothing for role {role}")
    return received


def _drain(
    requests: queue.Queue[discovery_pb2.DiscoveryRequest | None],
) -> Iterator[discovery_pb2.DiscoveryRequest]:
    while (request := requests.get()) is not None:
        yield request


def _unpack(type_url: str, resource: Any) -> Message:
    message: Message = MESSAGES[type_url]()
    resource.Unpack(message)
    return message


def _follow_up(
    type_url: str, received: dict[str, list[Any]]
) -> discovery_pb2.DiscoveryRequest | None:
    """After clusters, ask for their endpoints; after listeners, for their routes, or first
    for the scopes of a sharded listener (whose shards are route configurations too)."""
    messages = received[type_url]
    if type_url == CDS:
        names = sorted(
            m.eds_cluster_config.service_name or m.name
            for m in messages
            if m.type == cluster_pb2.Cluster.EDS
        )
        return discovery_pb2.DiscoveryRequest(type_url=EDS, resource_names=names) if names else None
    if type_url == LDS and any(_scoped(m) for m in messages):
        return discovery_pb2.DiscoveryRequest(type_url=SRDS)  # every scope
    if type_url in (LDS, SRDS):
        routes = {n for m in received.get(LDS, []) for n in _route_names(m)}
        routes |= {m.route_configuration_name for m in received.get(SRDS, [])}
        return (
            discovery_pb2.DiscoveryRequest(type_url=RDS, resource_names=sorted(routes))
            if routes
            else None
        )
    return None


def _managers(listener: Any) -> Iterator[hcm_pb2.HttpConnectionManager]:
    for chain in listener.filter_chains:
        for network_filter in chain.filters:
            manager = hcm_pb2.HttpConnectionManager()
            if network_filter.typed_config.Unpack(manager):
                yield manager


def _route_names(listener: Any) -> Iterator[str]:
    for manager in _managers(listener):
        if manager.HasField("rds"):
            yield manager.rds.route_config_name


def _scoped(listener: Any) -> bool:
    return any(m.HasField("scoped_routes") for m in _managers(listener))


def _secret_summary(secret: Any) -> dict[str, str]:
    """Name and kind only: a secret's content never leaves the control plane this way."""
    return {"name": secret.name, "type": secret.WhichOneof("type") or "unknown"}
