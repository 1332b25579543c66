"""`ComponentServer`: a gRPC server of gw's own data plane (the extauth and rate-limit
servers), configured by the control plane over xDS as Envoy is.

Both start the same way: the gRPC service on `bind:port` (no port sharing: a second server
on the same port fails loudly), then an `AdsClient` subscribed to the component's role. The
server answers from the first moment (with its "not configured yet" answer until the first
configuration arrives), and keeps its last configuration while the control plane is away.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from gw import defaults
from gw.supervision import supervise
from gw.xds.client import AdsClient, Apply, component_node
from gw.xds.tls import CertificateFolder, plaintext_refusal

log = logging.getLogger(__name__)

AddService = Callable[[grpc.aio.Server], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Where a component listens (`bind:port`), and where (`xds_address`) and as which
    role it asks for its configuration; `node_id` defaults to one unique per process.
    `xds_certs` (a folder from `gw certgen`) makes it connect over mutual TLS; without it,
    only a loopback `xds_address` is dialled, unless `insecure_xds`."""

    port: int
    role: str
    bind: str = defaults.ANY_ADDRESS
    xds_address: str = defaults.XDS_ADDRESS
    node_id: str = ""
    xds_certs: Path | None = None
    insecure_xds: bool = False


class ComponentServer:
    """A `gw.lifecycle.Server` named `name` (also the node's cluster in xDS): `add_service`
    puts the component's gRPC service on the server; `apply` takes each configuration of
    `type_url` (raising refuses it: a NACK); `close` releases what the service holds (HTTP
    and Redis clients) once the gRPC server has stopped."""

    def __init__(
        self,
        name: str,
        placement: Placement,
        type_url: str,
        apply: Apply,
        add_service: AddService,
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self.name = name
        bind, port = placement.bind, placement.port
        self.address = f"[{bind}]:{port}" if ":" in bind else f"{bind}:{port}"
        node = component_node(name, placement.role, placement.node_id)
        self.placement = placement
        self.ads = AdsClient(
            placement.xds_address, node, type_url, apply, certs=placement.xds_certs
        )
        self._add_service = add_service
        self._close = close
        self._grpc: grpc.aio.Server | None = None
        self._subscription: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Serve on the address and subscribe; raises OSError if the port cannot be bound,
        XdsTlsError if the certificates cannot be used, and OSError if xDS would be plaintext
        off loopback."""
        where = self.placement
        if where.xds_certs is not None:
            CertificateFolder(where.xds_certs).read()
        elif not where.insecure_xds and (refusal := plaintext_refusal(where.xds_address, "dial")):
            raise OSError(refusal)
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        self._add_service(server)
        if server.add_insecure_port(self.address) == 0:
            raise OSError(f"cannot listen for {self.name} on {self.address}")
        await server.start()
        self._grpc = server
        self._subscription = asyncio.create_task(
            supervise(f"{self.name} xds subscription", self.ads.run), name=f"{self.name}-xds"
        )
        log.info("%s: listening on %s, configured by %s", self.name, self.address, self.ads.address)

    async def wait(self) -> None:
        """The subscription runs until cancelled (supervised: a bug restarts it)."""
        assert self._subscription is not None, "wait() before start()"
        await asyncio.shield(self._subscription)

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.cancel()
        if self._grpc is not None:
            await self._grpc.stop(grace=0.5)
        await self._close()
