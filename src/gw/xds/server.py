"""`AdsServer`: the Aggregated Discovery Service, xDS v3: state of the world, and delta
(incremental: `gw.xds.delta`), which gw's proxies use.

State-of-the-world rules (verified against Envoy 1.40, ENVOY-NOTES.md §1b):
- A request whose `response_nonce` is the last nonce sent on that type is an ACK, or a
  NACK when it carries `error_detail`; it is not answered unless it changes the names.
- A request with an older nonce is stale and ignored.
- LDS and CDS are wildcard (everything is sent; an absent resource is deleted); other
  types send only the names asked for.
- A type is pushed again whenever the version of what it would send changes.
A NACK keeps Envoy on its previous config; it is logged and kept on the connection so that
the control plane can report it on the Proxy's status. A delta stream acknowledges each
response by its nonce, the same way.

Who may connect as which role, and subscribe to what, is `gw.xds.identity`'s `NodePolicy`:
a refused node's stream ends with the refusal's status and message, and a log line. The
transport is `gw.xds.tls`: mutual TLS when given certificates, else plaintext, which only a
loopback address (or a Unix socket) may serve unless `insecure` says otherwise.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2

from gw.supervision import TASKS
from gw.xds import delta
from gw.xds.cache import NodeSnapshot, SnapshotCache
from gw.xds.identity import NodePolicy, Refusal, certificate_roles
from gw.xds.tls import ServerCertificates, plaintext_refusal

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
    _TYPE + "envoy.config.route.v3.ScopedRouteConfiguration",
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
    #: Delta streams: the version of each resource the client holds, the snapshot that
    #: was reconciled last, the names newly subscribed, and the snapshots of the last
    #: push and of the last one acknowledged (their versions are told on demand).
    delta: bool = False
    known: dict[str, str] = field(default_factory=dict)
    synced: NodeSnapshot | None = None
    pending: set[str] = field(default_factory=set)
    sent: NodeSnapshot | None = None
    acked: NodeSnapshot | None = None

    def versions(self, type_url: str) -> tuple[str, str]:
        """(sent, acked): the state-of-the-world version of what was sent and acked."""
        if not self.delta:
            return self.sent_version, self.acked_version
        sent = self.sent.version(type_url, self.names) if self.sent is not None else ""
        acked = self.acked.version(type_url, self.names) if self.acked is not None else ""
        return sent, acked


@dataclass(slots=True)
class Connection:
    """One connected ADS stream: who it is and where each of its types stands."""

    id: int
    peer: str
    node_id: str = ""
    role: str = ""
    connected_at: float = field(default_factory=time.time)
    types: dict[str, TypeState] = field(default_factory=dict)
    refusal: Refusal | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "peer": self.peer,
            "node": self.node_id,
            "role": self.role,
            "connectedAt": self.connected_at,
            "delta": any(s.delta for s in self.types.values()),
            "types": {
                t.removeprefix(_TYPE): {
                    "sent": s.versions(t)[0],
                    "acked": s.versions(t)[1],
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
    def __init__(self, cache: SnapshotCache, policy: NodePolicy | None = None) -> None:
        self.cache = cache
        self.policy = policy or NodePolicy()
        self.connections: dict[int, Connection] = {}
        self.nack_count = 0
        self.refused_count = 0
        self._ids = itertools.count(1)
        self._nonces = itertools.count(1)

    async def StreamAggregatedResources(  # noqa: N802 (gRPC method name)
        self, request_iterator: AsyncIterator[discovery_pb2.DiscoveryRequest], context: Any
    ) -> AsyncIterator[discovery_pb2.DiscoveryResponse]:
        """State of the world."""
        async for response in self._stream(request_iterator, context, self._responses):
            yield response

    async def DeltaAggregatedResources(  # noqa: N802 (gRPC method name)
        self, request_iterator: AsyncIterator[discovery_pb2.DeltaDiscoveryRequest], context: Any
    ) -> AsyncIterator[discovery_pb2.DeltaDiscoveryResponse]:
        """Incremental (delta): the same identity checks, only what changed is sent."""
        async for response in self._stream(request_iterator, context, self._delta_responses):
            yield response

    async def _stream(
        self,
        request_iterator: AsyncIterator[Any],
        context: Any,
        responses: Callable[[Connection, NodeSnapshot], list[Any]],
    ) -> AsyncIterator[Any]:
        """One stream: requests recorded as they come, responses sent when the role's
        snapshot or the subscriptions change."""
        conn = Connection(id=next(self._ids), peer=context.peer())
        certified = certificate_roles(context.auth_context())
        self.connections[conn.id] = conn
        wake = asyncio.Event()
        closed = False

        async def read() -> None:
            nonlocal closed
            try:
                async for request in request_iterator:
                    conn.refusal = await self._on_request(conn, request, wake, certified)
                    if conn.refusal is not None:
                        return
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
                if conn.refusal is not None:
                    self._refuse(conn, context)
                    return
                if closed:
                    return
                snapshot = self.cache.get(conn.role) if conn.role else None
                if snapshot is None:
                    continue
                for response in responses(conn, snapshot):
                    yield response
        except Exception as exc:  # the stream ends; the client connects again
            _push_failed(conn, exc)
            raise
        finally:
            reader.cancel()
            if conn.role:
                self.cache.unwatch(conn.role, wake)
            self.connections.pop(conn.id, None)
            if conn.refusal is None:
                log.info("xds: %s (%s) disconnected", conn.node_id or conn.peer, conn.role)

    def _refuse(self, conn: Connection, context: Any) -> None:
        """End the stream with the refusal's status (set, not raised: a refusal is no error
        of the server's)."""
        assert conn.refusal is not None
        self.refused_count += 1
        who = f"{conn.node_id or 'a node'} from {conn.peer}"
        log.warning("xds: refused %s: %s", who, conn.refusal.message)
        context.set_code(conn.refusal.code)
        context.set_details(conn.refusal.message)

    async def _admit(
        self, conn: Connection, node: base_pb2.Node, certified: tuple[str, ...] | None
    ) -> Refusal | None:
        """Identify the stream's node; a refusal when it may not have the role it announces.
        A plaintext node with a role not known yet waits for the first translation, which
        names the proxies, before it is judged."""
        conn.node_id = node.id
        role = role_of(node)
        refusal = self.policy.admit(role, certified, self.cache.roles())
        if refusal is not None and certified is None and not self.cache.published.is_set():
            await self.cache.published.wait()
            refusal = self.policy.admit(role, certified, self.cache.roles())
        if refusal is None:
            conn.role = role
            log.info("xds: %s connected as %s from %s", conn.node_id, conn.role, conn.peer)
        return refusal

    async def _on_request(
        self,
        conn: Connection,
        request: Any,
        wake: asyncio.Event,
        certified: tuple[str, ...] | None,
    ) -> Refusal | None:
        if not conn.role:
            if not request.HasField("node"):
                return Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT, "the first request must carry the node"
                )
            refusal = await self._admit(conn, request.node, certified)
            if refusal is not None:
                return refusal
            self.cache.watch(conn.role, wake)
        refusal = self.policy.refuse_type(conn.role, request.type_url)
        if refusal is not None:
            return refusal
        if isinstance(request, discovery_pb2.DeltaDiscoveryRequest):
            self._record_delta(conn, request)
        else:
            self._record(conn, request)
        wake.set()
        return None

    def _record(self, conn: Connection, request: discovery_pb2.DiscoveryRequest) -> None:
        """A request of an admitted node: a subscription, an ACK or a NACK."""
        state = conn.types.setdefault(request.type_url, TypeState())
        names = _requested_names(request)
        if request.response_nonce:
            if request.response_nonce != state.nonce:
                return  # stale: an answer to something we have since replaced
            self._answered(conn, request, state, request.version_info)
            if names != state.names:
                state.names = names
                state.answer = True
        else:
            state.names = names
            state.answer = True

    def _answered(self, conn: Connection, request: Any, state: TypeState, version: str) -> None:
        """An ACK (the client applied what was sent) or a NACK (it kept what it had)."""
        type_name = request.type_url.removeprefix(_TYPE)
        if request.HasField("error_detail"):
            sent = state.versions(request.type_url)[0]
            state.nack = Nack(sent, request.error_detail.message, time.time())
            self.nack_count += 1
            log.warning(
                "xds: %s rejected %s version %s: %s",
                conn.node_id,
                type_name,
                sent,
                request.error_detail.message,
            )
            return
        state.acked_version, state.acked = version, state.sent
        state.nack = None
        state.apply_seconds = time.monotonic() - state.sent_at
        log.debug(
            "xds: %s acked %s after %.1f ms", conn.node_id, type_name, state.apply_seconds * 1000
        )

    def _record_delta(self, conn: Connection, request: discovery_pb2.DeltaDiscoveryRequest) -> None:
        """A request of a delta stream: a subscription change, an ACK or a NACK."""
        first = request.type_url not in conn.types
        state = conn.types.setdefault(request.type_url, TypeState(delta=True))
        if request.response_nonce:
            if request.response_nonce == state.nonce:
                self._answered(conn, request, state, "")
            if not request.resource_names_subscribe and not request.resource_names_unsubscribe:
                return
        state.names, added = delta.subscribe(state.names, state.known, request, first)
        state.pending |= added
        state.answer = state.answer or first or bool(added)

    def _responses(
        self, conn: Connection, snapshot: NodeSnapshot
    ) -> list[discovery_pb2.DiscoveryResponse]:
        out = []
        for type_url in _in_send_order(conn.types):
            state = conn.types[type_url]
            version = snapshot.version(type_url, state.names)
            if not state.answer and version == state.sent_version:
                continue
            selected = snapshot.select(type_url, state.names)
            state.answer = False
            state.sent_version, state.sent = version, snapshot
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

    def _delta_responses(
        self, conn: Connection, snapshot: NodeSnapshot
    ) -> list[discovery_pb2.DeltaDiscoveryResponse]:
        out = []
        for type_url in _in_send_order(conn.types):
            state = conn.types[type_url]
            names = delta.candidates(state.synced, snapshot, type_url, state.pending)
            if names is not None and not names and not state.answer:
                state.synced = snapshot
                continue
            nonce = str(next(self._nonces))
            response = delta.response(type_url, state.names, state.known, names, snapshot, nonce)
            state.synced, state.pending = snapshot, set()
            if not response.resources and not response.removed_resources and not state.answer:
                continue
            state.answer = False
            state.nonce, state.sent, state.sent_at = nonce, snapshot, time.monotonic()
            response.control_plane.identifier = "gw"
            log.debug(
                "xds: sending %s (%d resources, %d removed) to %s",
                type_url.removeprefix(_TYPE),
                len(response.resources),
                len(response.removed_resources),
                conn.node_id,
            )
            out.append(response)
        return out


def _in_send_order(types: Iterable[str]) -> list[str]:
    """Clusters before the listeners and routes that use them (see `SEND_ORDER`)."""
    order = {t: i for i, t in enumerate(SEND_ORDER)}
    return sorted(types, key=lambda t: (order.get(t, len(order)), t))


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


async def start_server(
    server: AdsServer,
    address: str,
    *more: str,
    tls: ServerCertificates | None = None,
    insecure: bool = False,
) -> grpc.aio.Server:
    """Serve ADS on `address` (`host:port`) and any `more` (`unix:<path>` too), over mutual
    TLS with `tls`; raises OSError if one cannot be bound, or would be plaintext off
    loopback without `insecure`."""
    if tls is None and not insecure:
        for each in (address, *more):
            refusal = plaintext_refusal(each, "serve")
            if refusal is not None:
                raise OSError(refusal)
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
        if tls is not None:
            bound = grpc_server.add_secure_port(each, tls.credentials())
        else:
            bound = grpc_server.add_insecure_port(each)
        if bound == 0:
            raise OSError(f"cannot listen for xDS on {each}")
    await grpc_server.start()
    return grpc_server


class XdsServer:
    """ADS served on `addresses` as a `gw.lifecycle.Server` (`start_server` at start), over
    mutual TLS with the certificates in the folder `certs`; plaintext off loopback only when
    `insecure`."""

    name = "xds"

    def __init__(
        self, ads: AdsServer, *addresses: str, certs: Path | None = None, insecure: bool = False
    ) -> None:
        self.ads = ads
        self.addresses = addresses
        self.certs = certs
        self.insecure = insecure
        self._grpc: grpc.aio.Server | None = None

    async def start(self) -> None:
        tls = ServerCertificates(self.certs) if self.certs is not None else None
        self._grpc = await start_server(self.ads, *self.addresses, tls=tls, insecure=self.insecure)

    async def wait(self) -> None:
        assert self._grpc is not None, "wait() before start()"
        # Shielded: cancelling a wait must not cancel gRPC's own shutdown future.
        await asyncio.shield(self._grpc.wait_for_termination())

    async def stop(self) -> None:
        if self._grpc is not None:
            await self._grpc.stop(grace=0.5)
