"""Small real upstreams for the Upstream tests, each in a thread of the test process and
always on loopback (or a Unix socket): what `gw echo` cannot be.

- `NamedServer`: HTTP/1.1 answering JSON `{"name": ...}`; it can fail its health check
  path, fail every request (500), or serve a Unix socket;
- `H2Server`: HTTP/2 with prior knowledge only (h2c), answering which protocol it spoke;
- `ProxyProtocolServer`: reads a PROXY protocol header, then answers with it;
- `GrpcHealthServer`: the standard gRPC health service (`grpc.health.v1.Health/Check`),
  serving or not.
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Callable
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import h2.config
import h2.connection
import h2.events

from tests.support.ports import free_port


class NamedServer:
    """HTTP/1.1 on 127.0.0.1 (or `socket_path`). `sick_path` answers 503 (a failing health
    check); `failing` answers 500 to everything."""

    def __init__(
        self,
        name: str,
        *,
        sick_path: str | None = None,
        failing: bool = False,
        socket_path: Path | None = None,
    ) -> None:
        self.name = name
        self.requests = 0

        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                outer.requests += 1
                sick = sick_path is not None and self.path.startswith(sick_path)
                status = 500 if failing else 503 if sick else 200
                body = json.dumps({"name": outer.name, "path": self.path}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def address_string(self) -> str:
                return "unix" if socket_path is not None else super().address_string()

            def log_message(self, *args: Any) -> None:
                pass

        if socket_path is not None:
            self.port = 0
            self._server: socketserver.BaseServer = _UnixHttpServer(str(socket_path), Handler)
        else:
            self.port = free_port()
            self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _UnixHttpServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _TcpServer:
    """Accepts connections on a free loopback port, each served by `_serve` in a thread."""

    def __init__(self) -> None:
        self.port = free_port()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed by stop()
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self._listener.close()


class H2Server(_TcpServer):
    """Speaks HTTP/2 only: a request over HTTP/1.1 gets no answer (the connection closes)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__()

    def _serve(self, conn: socket.socket) -> None:
        h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
        h2conn.initiate_connection()
        with conn:
            conn.sendall(h2conn.data_to_send())
            while data := _recv(conn):
                try:
                    events = h2conn.receive_data(data)
                except Exception:  # noqa: BLE001 (not HTTP/2: hang up, as an h2c-only server does)
                    return
                for event in events:
                    if isinstance(event, h2.events.RequestReceived):
                        self._answer(h2conn, event)
                conn.sendall(h2conn.data_to_send())

    def _answer(self, h2conn: h2.connection.H2Connection, event: h2.events.RequestReceived) -> None:
        headers = {k.decode() if isinstance(k, bytes) else k: v for k, v in event.headers or []}
        path = headers.get(":path", b"")
        body = json.dumps(
            {
                "name": self.name,
                "protocol": "HTTP/2",
                "path": path.decode() if isinstance(path, bytes) else path,
            }
        ).encode()
        assert event.stream_id is not None
        h2conn.send_headers(
            event.stream_id,
            [(":status", "200"), ("content-type", "application/json"),
             ("content-length", str(len(body)))],
        )  # fmt: skip
        h2conn.send_data(event.stream_id, body, end_stream=True)


def _recv(conn: socket.socket) -> bytes:
    try:
        return conn.recv(65536)
    except OSError:
        return b""


class ProxyProtocolServer(_TcpServer):
    """Reads the PROXY protocol v1 line, then answers every HTTP request with it (JSON)."""

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as stream:
            header = stream.readline().decode("latin-1").strip()
            while request_line := stream.readline():
                while stream.readline() not in (b"\r\n", b"\n", b""):
                    pass  # request headers
                body = json.dumps({"proxy_protocol": header, "request": request_line.decode()})
                data = body.encode()
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(data)}\r\n\r\n".encode()
                    + data
                )


#: `grpc.health.v1.HealthCheckResponse` with status SERVING (1) or NOT_SERVING (2):
#: field 1, varint, written out rather than generated.
SERVING, NOT_SERVING = b"\x08\x01", b"\x08\x02"


class GrpcHealthServer:
    """The gRPC health service of a server that is `serving` or not."""

    def __init__(self, serving: bool) -> None:
        answer = SERVING if serving else NOT_SERVING
        self.port = free_port()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        identity: Callable[[bytes], bytes] = lambda b: b  # noqa: E731
        check = grpc.unary_unary_rpc_method_handler(
            lambda request, context: answer,
            request_deserializer=identity,
            response_serializer=identity,
        )
        handler = grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": check})
        self._server.add_generic_rpc_handlers((handler,))
        self._server.add_insecure_port(f"127.0.0.1:{self.port}")
        self._server.start()

    def stop(self) -> None:
        self._server.stop(grace=None)
