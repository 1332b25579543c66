"""The ADS client (what the extauth server subscribes with) against the real ADS server:
ACK, NACK, keeping the last config while the control plane is away, and reconnecting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from envoy.config.core.v3 import base_pb2
from google.protobuf import any_pb2, struct_pb2

from gw.xds.cache import SnapshotCache
from gw.xds.client import AdsClient
from gw.xds.server import AdsServer, TypeState, start_server
from tests.support.ports import free_port

TYPE = "type.googleapis.com/google.protobuf.Struct"
ROLE = "gw-system~extauth"


def struct(**fields: object) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(fields)
    return out


def node() -> base_pb2.Node:
    return base_pb2.Node(id="extauth-test", metadata=struct(role=ROLE))


class Received:
    """What the client applied; refuses Structs that have `bad` set (a NACK)."""

    def __init__(self) -> None:
        self.configs: list[list[dict[str, object]]] = []

    def __call__(self, resources: Sequence[any_pb2.Any]) -> None:
        batch = []
        for resource in resources:
            message = struct_pb2.Struct()
            resource.Unpack(message)
            if "bad" in message.fields:
                raise ValueError(f"refused {message.fields['name'].string_value}")
            batch.append(dict(message.items()))
        self.configs.append(batch)


async def until(condition: Callable[[], object], timeout: float = 5) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


@pytest.fixture
async def control_plane() -> object:
    cache = SnapshotCache()
    server = AdsServer(cache)
    port = free_port()
    grpc_server = await start_server(server, f"127.0.0.1:{port}")
    yield cache, server, port
    await grpc_server.stop(grace=0)


async def test_applies_acks_and_nacks(control_plane: tuple[SnapshotCache, AdsServer, int]) -> None:
    cache, server, port = control_plane
    cache.set(ROLE, {TYPE: {"a": struct(name="a")}})
    received = Received()
    client = AdsClient(f"127.0.0.1:{port}", node(), TYPE, received)
    task = asyncio.create_task(client.run())
    try:
        await asyncio.wait_for(client.state.ready.wait(), 5)
        assert received.configs == [[{"name": "a"}]]
        good = client.state.version

        def state() -> TypeState:
            (conn,) = server.connections.values()
            return conn.types[TYPE]

        await until(lambda: state().acked_version == good)
        cache.set(ROLE, {TYPE: {"a": struct(name="a"), "b": struct(name="b", bad=True)}})
        await until(lambda: state().nack is not None)
        assert "refused b" in str(state().nack)
        assert client.state.version == good and client.state.last_error == "refused b"
        assert len(received.configs) == 1  # nothing of the refused version was kept
        cache.set(ROLE, {TYPE: {"c": struct(name="c")}})
        await until(lambda: len(received.configs) == 2)
        assert received.configs[-1] == [{"name": "c"}]
        await until(lambda: state().nack is None)
    finally:
        task.cancel()


async def test_keeps_config_while_control_plane_is_away_and_reconnects() -> None:
    port = free_port()
    cache = SnapshotCache()
    cache.set(ROLE, {TYPE: {"a": struct(name="a")}})
    grpc_server = await start_server(AdsServer(cache), f"127.0.0.1:{port}")
    received = Received()
    client = AdsClient(f"127.0.0.1:{port}", node(), TYPE, received)
    task = asyncio.create_task(client.run())
    try:
        await asyncio.wait_for(client.state.ready.wait(), 5)
        await grpc_server.stop(grace=0)
        await until(lambda: not client.state.connected)
        assert received.configs == [[{"name": "a"}]]  # nothing taken away
        restarted = SnapshotCache()
        restarted.set(ROLE, {TYPE: {"z": struct(name="z")}})
        grpc_server = await start_server(AdsServer(restarted), f"127.0.0.1:{port}")
        await until(lambda: received.configs[-1] == [{"name": "z"}], timeout=10)
        assert client.state.connected
    finally:
        task.cancel()
        await grpc_server.stop(grace=0)
