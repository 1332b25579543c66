"""A gRPC server the test starts (a peer outside the product: an access log service, a
gRPC upstream), as grpc.aio in a thread of its own on a free loopback port."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import grpc

from tests.support.ports import free_port


class GrpcPeer:
    """Serves `handlers` (`grpc.method_handlers_generic_handler` results) until `stop()`."""

    def __init__(self, *handlers: Any) -> None:
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(handlers), self.loop).result(timeout=10)

    async def _start(self, handlers: tuple[Any, ...]) -> None:
        self.server = grpc.aio.server()
        self.server.add_generic_rpc_handlers(handlers)
        self.server.add_insecure_port(f"127.0.0.1:{self.port}")
        await self.server.start()

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(None), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()  # its self-pipe sockets, which a garbage collection would warn about


def greeter_descriptor_set() -> bytes:
    """A `FileDescriptorSet` of `gw.test.Greeter/Hello` (a `google.protobuf.StringValue` in,
    one out), with the file it imports: what `protoc --descriptor_set_out
    --include_imports` writes for such a service."""
    from google.protobuf import descriptor_pb2, wrappers_pb2

    wrappers = descriptor_pb2.FileDescriptorProto()
    wrappers_pb2.DESCRIPTOR.CopyToProto(wrappers)
    greeter = descriptor_pb2.FileDescriptorProto(
        name="gw/test/greeter.proto",
        package="gw.test",
        dependency=[wrappers.name],
        syntax="proto3",
        service=[
            descriptor_pb2.ServiceDescriptorProto(
                name="Greeter",
                method=[
                    descriptor_pb2.MethodDescriptorProto(
                        name="Hello",
                        input_type=".google.protobuf.StringValue",
                        output_type=".google.protobuf.StringValue",
                    )
                ],
            )
        ],
    )
    return descriptor_pb2.FileDescriptorSet(file=[wrappers, greeter]).SerializeToString()
