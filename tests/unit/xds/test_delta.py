"""The ADS server's delta (incremental) streams, driven by a real gRPC client: only what
changed is sent, removals are named, ACKs and NACKs are kept per type, a reconnecting
client's versions are honoured, and the node checks are the state of the world's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest
from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.route.v3 import route_pb2
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2

from gw.translator.envoy.xds import Messages
from gw.xds.cache import SnapshotCache
from gw.xds.server import AdsServer, start_server
from tests.support.ports import free_port
from tests.unit.xds.test_server import CDS, RDS, ROLE, Stream, resources, until

STRUCT = "type.googleapis.com/google.protobuf.Struct"


class DeltaClient(Stream):
    def __init__(self, stub: ads_pb2_grpc.AggregatedDiscoveryServiceStub, role: str = ROLE):
        super().__init__(stub.DeltaAggregatedResources, "delta-node", role)

    async def send(
        self,
        type_url: str,
        subscribe: tuple[str, ...] = (),
        unsubscribe: tuple[str, ...] = (),
        nonce: str = "",
        error: str | None = None,
        known: dict[str, str] | None = None,
    ) -> None:
        request = discovery_pb2.DeltaDiscoveryRequest(
            type_url=type_url,
            resource_names_subscribe=subscribe,
            resource_names_unsubscribe=unsubscribe,
            response_nonce=nonce,
            initial_resource_versions=known or {},
        )
        await self.put(request, error)


Setup = tuple[SnapshotCache, AdsServer, grpc.aio.Channel]


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    cache = SnapshotCache()
    ads = AdsServer(cache)
    address = f"127.0.0.1:{free_port()}"
    server = await start_server(ads, address)
    channel = grpc.aio.insecure_channel(address)
    yield cache, ads, channel
    await channel.close()
    await server.stop(0)


def client_of(setup: Setup, role: str = ROLE) -> DeltaClient:
    return DeltaClient(ads_pb2_grpc.AggregatedDiscoveryServiceStub(setup[2]), role)


def named(response: discovery_pb2.DeltaDiscoveryResponse) -> list[str]:
    return [r.name for r in response.resources]


async def test_wildcard_sends_what_changed_and_names_what_went(setup: Setup) -> None:
    cache, ads, _ = setup
    client = client_of(setup)
    cache.set(ROLE, resources("a", "b"))
    await client.send(CDS)
    first = await client.receive()
    assert named(first) == ["a", "b"] and not first.removed_resources
    await client.send(CDS, nonce=first.nonce)  # ACK
    (conn,) = ads.connections.values()
    await until(lambda: conn.types[CDS].acked is not None)
    assert conn.summary()["delta"] is True
    cache.set(ROLE, resources("a", "b"))  # the same content: nothing is sent
    await client.nothing()
    changed = resources("a", "c")
    changed[CDS]["a"] = cluster_pb2.Cluster(name="a", alt_stat_name="new")
    cache.set(ROLE, changed)
    second = await client.receive()
    assert named(second) == ["a", "c"] and list(second.removed_resources) == ["b"]
    await client.requests.put(None)


async def test_named_subscriptions_and_unsubscribing(setup: Setup) -> None:
    cache, _, _ = setup
    client = client_of(setup)
    cache.set(ROLE, resources(routes=("r1", "r2", "r3")))
    await client.send(RDS, subscribe=("r2",))
    assert named(await client.receive()) == ["r2"]
    await client.send(RDS, subscribe=("r1", "missing"))
    assert named(await client.receive()) == ["r1"]
    await client.send(RDS, unsubscribe=("r2",))
    await client.nothing()  # nothing to send: the client dropped it itself
    cache.set(ROLE, resources(routes=("r1", "r3")))  # r2 gone: not the client's concern
    await client.nothing()
    await client.requests.put(None)


async def test_a_reconnecting_client_gets_only_what_it_lacks(setup: Setup) -> None:
    cache, _, _ = setup
    cache.set(ROLE, resources("a", "b"))
    first = client_of(setup)
    await first.send(CDS)
    response = await first.receive()
    versions = {r.name: r.version for r in response.resources}
    await first.requests.put(None)
    changed = resources("a", "b")
    changed[CDS]["b"] = cluster_pb2.Cluster(name="b", alt_stat_name="new")
    cache.set(ROLE, changed)
    again = client_of(setup)
    await again.send(CDS, known={**versions, "gone": "x"})
    response = await again.receive()
    assert named(response) == ["b"] and list(response.removed_resources) == ["gone"]
    await again.requests.put(None)


async def test_nack_is_recorded_and_not_resent(setup: Setup) -> None:
    cache, ads, _ = setup
    client = client_of(setup)
    cache.set(ROLE, resources("a"))
    await client.send(CDS)
    response = await client.receive()
    await client.send(CDS, nonce=response.nonce, error="bad cluster")
    await client.nothing()
    (conn,) = ads.connections.values()
    nack = conn.summary()["types"]["envoy.config.cluster.v3.Cluster"]["nack"]
    assert nack["message"] == "bad cluster" and ads.nack_count == 1
    await client.requests.put(None)


async def test_incrementally_packed_types_send_the_changed_names(setup: Setup) -> None:
    """A type handed over as `Messages` made from the last one is packed, and sent, for the
    names it changed alone."""
    cache, _, _ = setup
    client = client_of(setup)
    routes = Messages({f"r{i}": route_pb2.RouteConfiguration(name=f"r{i}") for i in range(50)})
    cache.set(ROLE, {RDS: routes})
    await client.send(RDS, subscribe=tuple(routes))
    assert len((await client.receive()).resources) == 50
    new = route_pb2.RouteConfiguration(name="r7", validate_clusters={"value": True})
    cache.set(ROLE, {RDS: routes.changed({"r7": new}, ["r9"])})
    response = await client.receive()
    assert named(response) == ["r7"] and list(response.removed_resources) == ["r9"]
    await client.requests.put(None)


async def test_a_proxy_may_not_subscribe_to_component_configuration(setup: Setup) -> None:
    """The node policy holds for delta streams too: a proxy asking for the extauth
    servers' configuration is refused."""
    cache, _, _ = setup
    cache.set(ROLE, resources("a"))
    client = client_of(setup)
    await client.send(STRUCT)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await asyncio.wait_for(client.reader, 5)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED


async def test_an_unknown_role_is_refused(setup: Setup) -> None:
    cache, _, _ = setup
    cache.set(ROLE, resources("a"))
    client = client_of(setup, role="gw-system~nobody")
    await client.send(CDS)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await asyncio.wait_for(client.reader, 5)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
