"""The ADS server's state-of-the-world rules, driven by a real gRPC client (Envoy's own
behaviour is covered end to end in tests/e2e)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.route.v3 import route_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2
from google.protobuf import struct_pb2
from google.rpc import status_pb2

from gw.xds.cache import SnapshotCache
from gw.xds.server import AdsServer, start_server
from tests.support.ports import free_port

CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
ROLE = "gw-system~gateway-proxy"


def resources(*clusters: str, routes: tuple[str, ...] = ()) -> dict[str, dict[str, object]]:
    return {
        CDS: {c: cluster_pb2.Cluster(name=c) for c in clusters},
        RDS: {r: route_pb2.RouteConfiguration(name=r) for r in routes},
    }


class Stream:
    """One ADS stream of a test client: requests queued, responses gathered as they come."""

    def __init__(self, open_stream: Callable[[AsyncIterator[Any]], Any], node: str, role: str):
        self.node, self.role = node, role
        self.requests: asyncio.Queue[Any] = asyncio.Queue()
        self.call = open_stream(self._iterate())
        self.first = True
        self.responses: asyncio.Queue[Any] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for response in self.call:
            await self.responses.put(response)

    async def _iterate(self) -> AsyncIterator[Any]:
        while (request := await self.requests.get()) is not None:
            yield request

    async def put(self, request: Any, error: str | None) -> None:
        """Send `request`; the first one carries the node, `error` makes it a NACK."""
        if self.first:
            metadata = struct_pb2.Struct()
            metadata.update({"role": self.role})
            request.node.id = self.node
            request.node.metadata.CopyFrom(metadata)
            self.first = False
        if error is not None:
            request.error_detail.CopyFrom(status_pb2.Status(code=3, message=error))
        await self.requests.put(request)

    async def receive(self, timeout: float = 5) -> Any:
        return await asyncio.wait_for(self.responses.get(), timeout)

    async def nothing(self, wait: float = 0.3) -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(self.responses.get(), wait)


class Client(Stream):
    def __init__(self, stub: ads_pb2_grpc.AggregatedDiscoveryServiceStub) -> None:
        super().__init__(stub.StreamAggregatedResources, "test-node", ROLE)

    async def send(
        self,
        type_url: str,
        names: tuple[str, ...] = (),
        nonce: str = "",
        version: str = "",
        error: str | None = None,
    ) -> None:
        request = discovery_pb2.DiscoveryRequest(
            type_url=type_url, resource_names=names, response_nonce=nonce, version_info=version
        )
        await self.put(request, error)


async def until(condition: Callable[[], object], timeout: float = 5) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


@pytest.fixture
async def setup() -> AsyncIterator[tuple[SnapshotCache, AdsServer, Client]]:
    cache = SnapshotCache()
    ads = AdsServer(cache)
    address = f"127.0.0.1:{free_port()}"
    server = await start_server(ads, address)
    channel = grpc.aio.insecure_channel(address)
    client = Client(ads_pb2_grpc.AggregatedDiscoveryServiceStub(channel))
    yield cache, ads, client
    await client.requests.put(None)
    client.reader.cancel()
    await channel.close()
    await server.stop(0)


async def test_wildcard_push_ack_and_change(setup: tuple[SnapshotCache, AdsServer, Client]) -> None:
    cache, ads, client = setup
    cache.set(ROLE, resources("a", "b"))
    await client.send(CDS)
    first = await client.receive()
    assert first.type_url == CDS and len(first.resources) == 2
    await client.send(CDS, nonce=first.nonce, version=first.version_info)  # ACK
    (conn,) = ads.connections.values()
    await until(lambda: conn.types[CDS].acked_version == first.version_info)
    cache.set(ROLE, resources("a", "b"))  # same content: nothing to send
    await client.nothing()
    cache.set(ROLE, resources("a"))
    second = await client.receive()
    assert len(second.resources) == 1 and second.version_info != first.version_info


async def test_named_types_send_only_what_is_asked(
    setup: tuple[SnapshotCache, AdsServer, Client],
) -> None:
    cache, _, client = setup
    cache.set(ROLE, resources(routes=("r1", "r2")))
    await client.send(RDS, names=("r2",))
    response = await client.receive()
    assert [route_pb2.RouteConfiguration.FromString(r.value).name for r in response.resources] == [
        "r2"
    ]
    # An ACK that asks for other names is answered.
    await client.send(RDS, names=("r1", "r2"), nonce=response.nonce, version=response.version_info)
    assert len((await client.receive()).resources) == 2


async def test_nack_is_recorded_and_not_resent(
    setup: tuple[SnapshotCache, AdsServer, Client],
) -> None:
    cache, ads, client = setup
    cache.set(ROLE, resources("a"))
    await client.send(CDS)
    response = await client.receive()
    await client.send(CDS, nonce=response.nonce, error="bad cluster")
    await client.nothing()
    (conn,) = ads.connections.values()
    await until(lambda: conn.types[CDS].nack is not None)
    nack = conn.types[CDS].nack
    assert nack is not None and nack.message == "bad cluster" and ads.nack_count == 1
    cache.set(ROLE, resources("fixed"))
    assert len((await client.receive()).resources) == 1
