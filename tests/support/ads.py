"""An ADS client for tests that check what the control plane serves, or refuses, to a role:
one stream, the requests given, read until enough answers came or the stream failed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

import grpc
from envoy.service.discovery.v3 import ads_pb2_grpc, discovery_pb2
from google.protobuf import struct_pb2

Responses = list[discovery_pb2.DiscoveryResponse]


def request(
    role: str | None, type_url: str, names: Sequence[str] = ()
) -> discovery_pb2.DiscoveryRequest:
    """A subscription; with `role`, the node announcing it (the first request of a stream)."""
    out = discovery_pb2.DiscoveryRequest(type_url=type_url, resource_names=names)
    if role is not None:
        metadata = struct_pb2.Struct()
        metadata.update({"role": role})
        out.node.id = f"probe-{role}"
        out.node.metadata.CopyFrom(metadata)
    return out


async def exchange(
    channel: grpc.aio.Channel,
    requests: Sequence[discovery_pb2.DiscoveryRequest],
    enough: Callable[[Responses], bool] = bool,
    timeout: float = 10,
) -> tuple[Responses, grpc.aio.AioRpcError | None]:
    """Send `requests` on one stream; the responses until `enough` of them (by default one)
    or the stream's failure, and that failure."""

    async def outgoing() -> AsyncIterator[discovery_pb2.DiscoveryRequest]:
        for each in requests:
            yield each
        await asyncio.sleep(timeout + 5)

    call = ads_pb2_grpc.AggregatedDiscoveryServiceStub(channel).StreamAggregatedResources(
        outgoing()
    )
    responses: Responses = []
    try:
        async with asyncio.timeout(timeout):
            async for response in call:
                responses.append(response)
                if enough(responses):
                    return responses, None
    except grpc.aio.AioRpcError as exc:
        return responses, exc
    finally:
        call.cancel()
    raise AssertionError(f"the stream ended without an error after {len(responses)} responses")
