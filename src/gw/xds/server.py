"""`AdsServer`: the Aggregated Discovery Service, state of the world, xDS v3.

Rules (verified against Envoy 1.40, ENVOY-NOTES.md §1b):
- A request whose `response_nonce` is the last nonce sent on that type is an ACK, or a
  NACK when it carries `error_detail`; it is not answered unless it changes the names.
- A request with an older nonce is stale and ignored.
- LDS and CDS are wildcard (everything is sent; an absent resource is deleted); other
  types send only the names asked for.
- A type is pushed again whenever the version of what it would send changes.
A NACK keeps Envoy on its previous config; it is logged and kept on the connection so that
the control plane can report it on the Proxy's status.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2

from gw.supervision import TASKS
from gw.xds.cache import NodeSnapshot, SnapshotCache, version_of

log = logging.getLogger(__name__)

_TYPE = "type.googleapis.com/"
ENVOY_WILDCARD_TYPES = frozenset(
    {_TYPE + "envoy.config.listener.v3.Listener", _TYPE + "envoy.config.cluster.v3.Cluster"}
)
#: Types Envoy subscribes to by name; any other type asked for with no names is wildcard.
ENVOY_NAMED_TYPES = frozenset(
    {
        _TYPE + "envoy.config.route.v3.RouteConfiguration",
        _TYPE + "envoy.config.endpoint.v3.ClusterLoadAssignment",
        _TYPE + "envoy.extensions.transport_sockets.tls.v3.Secret",
    }
)
#: Send order when several types change at once: clusters before the listeners and routes
#: that use them, so that Envoy never routes to a cluster it has not got yet.
SEND_ORDER = (
    _TYPE + "envoy.config.cluster.v3.Cluster",
    _TYPE + "envoy.config.endpoint.v3.ClusterLoadAssignment",
    _TYPE + "envoy.extensions.transport_sockets.tls.v3.Secret",
    _TYPE + "envoy.config.listener.v3.Listener",
    _TYPE + "envoy.config.route.v3.RouteConfiguration",
)


def role_of(node: base_pb2.Node) -> str:
    """The snapshot key of a node: metadata `role`, else `<cluster>` as given."""
    role = node.metadata.fields.get("role")
    if role is not None and role.string_value:
        return str(role.string_value)
    return str(node.cluster or node.id)


@dataclass(slots=True)
class Nack:
    version: str
    message: str
    at: float


@dataclass(slots=True)
class TypeState:
    names: set[str] | None = None  # None: wildcard
    nonce: str = ""
    sent_version: str = ""
    acked_version: str = ""
    answer: bool = False
    nack: Nack | None = None
    sent_at: float = 0.0
    #: Seconds from the last push to its ACK: how long the client took to apply it.
    apply_seconds: float | None = None


@dataclass(slots=True)
class Connection:
    """One connected ADS stream: who it is and where each of its types stands."""

    id: int
    peer: str
    node_id: str = ""
    role: str = ""
    connected_at: float = field(default_factory=time.time)
    types: dict[str, TypeState] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "peer": self.peer,
            "node": self.node_id,
            "role": self.role,
            "connectedAt": self.connected_at,
            "types": {
                t.removeprefix(_TYPE): {
                    "sent": s.sent_version,
                    "acked": s.acked_version,
                    "applyMs": None
                    if s.apply_seconds is None
                    else round(s.apply_seconds * 1000, 2),
                    **(
                        {"nack": {"version": s.nack.version, "message": s.nack.message}}
                        if s.nack
                        else {}
                    ),
                }
                for t, s in sorted(self.types.items())
            },
        }


class AdsServer(ads_pb2_grpc.AggregatedDiscoveryServiceServicer):  # type: ignore[misc]
    def __init__(self, cache: SnapshotCache) -> None:
        self.cache = cache
        self.connections: dict[int, Connection] = {}
        self.nack_count = 0
        self._ids = itertools.count(1)
        self._nonces = itertools.count(1)

    async def StreamAggregatedResources(  # noqa: N802 (gRPC method name)
        self, request_iterator: AsyncIterator[discovery_pb2.DiscoveryRequest], context: Any
    ) -> AsyncIterator[discovery_pb2.DiscoveryResponse]:
        conn = Connection(id=next(self._ids), peer=context.peer())
        self.connections[conn.id] = conn
        wake = asyncio.Event()
        closed = False

        async def read() -> None:
            nonlocal closed
            try:
                async for request in request_iterator:
                    self._on_request(conn, request, wake)
            except Exception as exc:  # the stream ends; the client connects again
                _push_failed(conn, exc)
            finally:
                closed = True
                wake.set()

        reader = asyncio.create_task(read())
        try:
            while True:
                await wake.wait()
                wake.clear()
                if closed:
                    return
                snapshot = self.cache.get(conn.role) if conn.role else None
                if snapshot is None:
                    continue
                for response in self._responses(conn, snapshot):
                    yield response
        except Exception as exc:  # the stream ends; the client connects again
            _push_failed(conn, exc)
            raise
        finally:
            reader.cancel()
            if conn.role:
                self.cache.unwatch(conn.role, wake)
            self.connections.pop(conn.id, None)
            log.info("xds: %s (%s) disconnected", conn.node_id or conn.peer, conn.role)

    def _on_request(
        self, conn: Connection, request: discovery_pb2.DiscoveryRequest, wake: asyncio.Event
    ) -> None:
        if not conn.role and request.HasField("node"):
            conn.node_id = request.node.id
            conn.role = role_of(request.node)
            self.cache.watch(conn.role, wake)
            log.info("xds: %s connected as %s from %s", conn.node_id, conn.role, conn.peer)
        state = conn.types.setdefault(request.type_url, TypeState())
        names = _requested_names(request)
        if request.response_nonce:
            if request.response_nonce != state.nonce:
                return  # stale: an answer to something we have since replaced
            if request.HasField("error_detail"):
                state.nack = Nack(state.sent_version, request.error_detail.message, time.time())
                self.nack_count += 1
                log.warning(
                    "xds: %s rejected %s version %s: %s",
                    conn.node_id,
                    request.type_url.removeprefix(_TYPE),
                    state.sent_version,
                    request.error_detail.message,
                )
            else:
                state.acked_version = request.version_info
                state.nack = None
                state.apply_seconds = time.monotonic() - state.sent_at
                log.debug(
                    "xds: %s acked %s %s after %.1f ms",
                    conn.node_id,
                    request.type_url.removeprefix(_TYPE),
                    request.version_info,
                    state.apply_seconds * 1000,
                )
            if names != state.names:
                state.names = names
                state.answer = True
        else:
            state.names = names
            state.answer = True
        wake.set()

    def _responses(
        self, conn: Connection, snapshot: NodeSnapshot
    ) -> list[discovery_pb2.DiscoveryResponse]:
        out = []
        order = {t: i for i, t in enumerate(SEND_ORDER)}
        for type_url in sorted(conn.types, key=lambda t: (order.get(t, len(order)), t)):
            state = conn.types[type_url]
            selected = snapshot.select(type_url, state.names)
            version = version_of(selected)
            if not state.answer and version == state.sent_version:
                continue
            state.answer = False
            state.sent_version = version
            state.nonce = str(next(self._nonces))
            state.sent_at = time.monotonic()
            log.debug(
                "xds: sending %s %s (%d resources) to %s",
                type_url.removeprefix(_TYPE),
                version,
                len(selected),
                conn.node_id,
            )
            out.append(
                discovery_pb2.DiscoveryResponse(
                    version_info=version,
                    resources=[entry.resource for _, entry in selected],
                    type_url=type_url,
                    nonce=state.nonce,
                    control_plane=base_pb2.ControlPlane(identifier="gw"),
                )
            )
        return out


def _push_failed(conn: Connection, error: Exception) -> None:
    """An xDS stream that broke on a bug: logged and shown by `/tasks` and `gwctl check`
    (the stream ends; the proxy connects again, which restarts it)."""
    log.error("xds: the stream of %s failed", conn.node_id or conn.peer, exc_info=error)
    TASKS.failed("xds push", error)


def _requested_names(request: discovery_pb2.DiscoveryRequest) -> set[str] | None:
    names = set(request.resource_names)
    if request.type_url in ENVOY_WILDCARD_TYPES or "*" in names:
        return None
    if not names and request.type_url not in ENVOY_NAMED_TYPES:
        return None
    return names


async def start_server(server: AdsServer, address: str, *more: str) -> grpc.aio.Server:
    """Serve ADS on `address` (`host:port`) and any `more` (`unix:<path>` too); raises if
    one cannot be bound."""
    grpc_server = grpc.aio.server(
        options=[
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.http2.max_pings_without_data", 0),
            ("grpc.max_send_message_length", -1),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ]
    )
    ads_pb2_grpc.add_AggregatedDiscoveryServiceServicer_to_server(server, grpc_server)
    for each in (address, *more):
        if grpc_server.add_insecure_port(each) == 0:
            raise OSError(f"cannot listen for xDS on {each}")
    await grpc_server.start()
    return grpc_server


class XdsServer:
    """ADS served on `addresses` as a `gw.lifecycle.Server` (`start_server` at start)."""

    name = "xds"

    def __init__(self, ads: AdsServer, *addresses: str) -> None:
        self.ads = ads
        self.addresses = addresses
        self._grpc: grpc.aio.Server | None = None

    async def start(self) -> None:
        self._grpc = await start_server(self.ads, *self.addresses)

    async def wait(self) -> None:
        assert self._grpc is not None, "wait() before start()"
        # Shielded: cancelling a wait must not cancel gRPC's own shutdown future.
        await asyncio.shield(self._grpc.wait_for_termination())

    async def stop(self) -> None:
        if self._grpc is not None:
            await self._grpc.stop(grace=0.5)
