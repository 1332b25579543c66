"""An external processor for end-to-end tests: a test peer outside the product (a user's
ext_proc server), a grpc.aio `ExternalProcessor` on a free loopback port, served from a
thread of its own.

On request headers it adds `x-ext-proc-<name>: <path it saw>`, and follows the
`instructions` header as the established gateway's example processor does
(`{"addHeaders": {...}, "removeHeaders": [...]}`); on response headers it adds
`x-ext-proc-<name>-response: yes`. `seen` holds the request headers it was sent."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc


def _header(key: str, value: str) -> base_pb2.HeaderValueOption:
    return base_pb2.HeaderValueOption(
        header=base_pb2.HeaderValue(key=key, raw_value=value.encode())
    )


def _headers(message: pb.HttpHeaders) -> dict[str, str]:
    return {
        h.key: (h.raw_value.decode() if h.raw_value else h.value) for h in message.headers.headers
    }


class _Servicer(pb_grpc.ExternalProcessorServicer):  # type: ignore[misc]
    def __init__(self, processor: ExtProcessor) -> None:
        self.processor = processor

    async def Process(  # noqa: N802 (the gRPC method's name)
        self, requests: AsyncIterator[pb.ProcessingRequest], context: object
    ) -> AsyncIterator[pb.ProcessingResponse]:
        name = self.processor.name
        async for request in requests:
            if request.HasField("request_headers"):
                headers = _headers(request.request_headers)
                self.processor.seen.append(headers)
                mutation = pb.HeaderMutation(
                    set_headers=[_header(f"x-ext-proc-{name}", headers.get(":path", ""))]
                )
                instructions = json.loads(headers.get("instructions", "{}"))
                for key, value in instructions.get("addHeaders", {}).items():
                    mutation.set_headers.append(_header(key, value))
                mutation.remove_headers.extend(instructions.get("removeHeaders", []))
                yield pb.ProcessingResponse(
                    request_headers=pb.HeadersResponse(
                        response=pb.CommonResponse(header_mutation=mutation)
                    )
                )
            elif request.HasField("response_headers"):
                mutation = pb.HeaderMutation(
                    set_headers=[_header(f"x-ext-proc-{name}-response", "yes")]
                )
                yield pb.ProcessingResponse(
                    response_headers=pb.HeadersResponse(
                        response=pb.CommonResponse(header_mutation=mutation)
                    )
                )
            elif request.HasField("request_body"):
                yield pb.ProcessingResponse(request_body=pb.BodyResponse())
            elif request.HasField("response_body"):
                yield pb.ProcessingResponse(response_body=pb.BodyResponse())


class ExtProcessor:
    def __init__(self, name: str = "processor") -> None:
        self.name = name
        self.seen: list[dict[str, str]] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: grpc.aio.Server | None = None
        self.port = 0
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the external processor did not start")

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self._server = grpc.aio.server()
        pb_grpc.add_ExternalProcessorServicer_to_server(_Servicer(self), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        await self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._server.stop(0), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()  # its self-pipe sockets, which a collection would warn about
