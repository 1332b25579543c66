"""`AdsClient`: a state-of-the-world ADS subscriber, as Envoy is one, for gw's own
data-plane components (the extauth server).

It subscribes to one type (wildcard), hands every response to `apply`, and answers like
Envoy: an ACK (the response's version and nonce) when `apply` accepts the resources, a NACK
(the last good version, the response's nonce and `error_detail`) when it raises. When the
stream breaks it reconnects with a short back-off (0.1 s doubling to 1 s); what was applied
last stays in force meanwhile, so a control-plane restart never takes config away.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2
from google.protobuf import any_pb2, struct_pb2
from google.rpc import status_pb2

from gw.xds.tls import XdsTlsError, secure_channel

log = logging.getLogger(__name__)

BACKOFF_START = 0.1
BACKOFF_MAX = 1.0
#: google.rpc.Code INVALID_ARGUMENT, as Envoy reports a rejected config.
_INVALID_ARGUMENT = 3

Apply = Callable[[Sequence[any_pb2.Any]], None]


def component_node(component: str, role: str, node_id: str | None = None) -> base_pb2.Node:
    """The node a gw component (`extauth`, `ratelimit`) announces: the control plane serves
    it the snapshot of `role`; the id defaults to one unique per process, for the logs."""
    metadata = struct_pb2.Struct()
    metadata.update({"role": role})
    return base_pb2.Node(
        id=node_id or f"{component}-{socket.gethostname()}-{os.getpid()}",
        cluster=component,
        metadata=metadata,
    )


@dataclass(slots=True)
class SubscriptionState:
    """Where the subscription stands, for logs and readiness checks."""

    connected: bool = False
    version: str = ""
    updates: int = 0
    last_error: str | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class AdsClient:
    def __init__(
        self,
        address: str,
        node: base_pb2.Node,
        type_url: str,
        apply: Apply,
        *,
        certs: Path | None = None,
    ) -> None:
        self.address = address
        self.node = node
        self.type_url = type_url
        self.apply = apply
        self.certs = certs
        self.state = SubscriptionState()

    async def run(self) -> None:
        """Subscribe until cancelled, reconnecting whenever the stream ends."""
        delay = BACKOFF_START
        while True:
            try:
                await self._stream()
                delay = BACKOFF_START
            except asyncio.CancelledError:
                raise
            except grpc.aio.AioRpcError as exc:
                if _refused(exc):  # its role or certificate: worth a warning every time
                    self.state.last_error = f"{exc.code().name}: {exc.details()}"
                    log.warning("xds: %s refused this node: %s", self.address, exc.details())
                else:
                    level = logging.INFO if self.state.connected else logging.DEBUG
                    log.log(
                        level, "xds: %s unavailable (%s); retrying", self.address, exc.code().name
                    )
            except XdsTlsError as exc:  # a certificate folder being rotated, or broken
                self.state.last_error = str(exc)
                log.warning("xds: cannot connect to %s: %s; retrying", self.address, exc)
            except Exception:  # a bug in apply's caller must not end the subscription
                log.exception("xds: subscription to %s failed; retrying", self.address)
            finally:
                self.state.connected = False
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    async def _stream(self) -> None:
        outbox: asyncio.Queue[discovery_pb2.DiscoveryRequest] = asyncio.Queue()
        outbox.put_nowait(
            discovery_pb2.DiscoveryRequest(
                node=self.node, type_url=self.type_url, version_info=self.state.version
            )
        )

        async def requests() -> AsyncIterator[discovery_pb2.DiscoveryRequest]:
            while True:
                yield await outbox.get()

        async with self._channel() as channel:
            stub = ads_pb2_grpc.AggregatedDiscoveryServiceStub(channel)
            call = stub.StreamAggregatedResources(requests())
            async for response in call:
                self.state.connected = True
                outbox.put_nowait(self._answer(response))

    def _channel(self) -> grpc.aio.Channel:
        if self.certs is None:
            return grpc.aio.insecure_channel(self.address)
        role = self.node.metadata.fields["role"].string_value
        return secure_channel(self.address, self.certs, role)

    def _answer(self, response: discovery_pb2.DiscoveryResponse) -> discovery_pb2.DiscoveryRequest:
        """Apply a response and say how it went (ACK or NACK)."""
        request = discovery_pb2.DiscoveryRequest(
            type_url=self.type_url, response_nonce=response.nonce
        )
        if response.type_url != self.type_url:
            error = f"unexpected type {response.type_url}"
        else:
            try:
                self.apply(response.resources)
            except Exception as exc:  # noqa: BLE001 (any refusal is a NACK, never a crash)
                error = str(exc) or type(exc).__name__
            else:
                self.state.version = response.version_info
                self.state.updates += 1
                self.state.last_error = None
                self.state.ready.set()
                request.version_info = response.version_info
                return request
        log.warning("xds: rejected version %s: %s", response.version_info, error)
        self.state.last_error = error
        request.version_info = self.state.version
        request.error_detail.CopyFrom(status_pb2.Status(code=_INVALID_ARGUMENT, message=error))
        return request


def _refused(exc: grpc.aio.AioRpcError) -> bool:
    """The control plane refused this node, unlike one that is away."""
    return exc.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)
