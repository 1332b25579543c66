"""Authorization services of the user's, for `passThroughAuth` tests: a real HTTP server and a
real gRPC server (Envoy's `Authorization/Check`), each in a thread of the test process on a
free loopback port, recording what they were asked and answering as the test says.

HTTP: a request (a passthrough's POST, or Envoy's own HTTP check, which keeps the method)
is allowed (200) when its `authorization` header is `authorize me`, denied with 401
otherwise; the answer carries `x-auth-user: <x-user header>`, `x-auth-extra: 1`,
`x-client-note: seen` and, when the request had a JSON body with a state, `{"state":
<that state plus "http_seen": true>}`. `/fail` answers 500, `/slow` answers after 3 s.
Anything under `/provider/` (GET or POST) is only recorded and answered 200: it stands in
for an identity provider's revocation and end-session endpoints.

gRPC: allowed when the request's `authorization` header is `authorize me` (headers
`x-auth-user`, the state returned with `grpc_seen: true`), else denied with 401 (or with
no status when the header is `deny quietly`).
"""

from __future__ import annotations

import json
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.auth.v3 import external_auth_pb2, external_auth_pb2_grpc
from envoy.type.v3 import http_status_pb2
from google.protobuf import json_format, struct_pb2
from google.rpc import code_pb2, status_pb2

from tests.support.ports import free_port

ALLOW = "authorize me"
STATE_NAMESPACE = "vendor.auth.passthrough"
CONFIG_NAMESPACE = "vendor.auth.passthrough.config"


class HttpAuthService:
    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            # Keep-alive, as real services do: with HTTP/1.0 every answer closes the
            # connection, and a client reusing it at that moment sees a reset.
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                self.do_POST()

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                recorded = {
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                }
                service.requests.append(recorded)
                if self.path.startswith("/provider/"):
                    recorded["form"] = raw.decode()
                    self._answer(200, {}, b"")
                    return
                body = json.loads(raw) if raw else None
                recorded["body"] = body
                if self.path == "/slow":
                    time.sleep(3)
                if self.path == "/fail":
                    self._answer(500, {}, b"")
                    return
                allowed = self.headers.get("authorization") == ALLOW
                headers = {
                    "x-auth-user": self.headers.get("x-user", "nobody"),
                    "x-auth-extra": "1",
                    "x-client-note": "seen",
                }
                answer = b""
                if isinstance(body, dict) and isinstance(body.get("state"), dict):
                    answer = json.dumps({"state": {**body["state"], "http_seen": True}}).encode()
                    headers["content-type"] = "application/json"
                self._answer(200 if allowed else 401, headers, answer)

            def _answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Checker(external_auth_pb2_grpc.AuthorizationServicer):  # type: ignore[misc]
    def __init__(self, requests: list[external_auth_pb2.CheckRequest]) -> None:
        self.requests = requests

    def Check(  # noqa: N802 (gRPC method name)
        self, request: external_auth_pb2.CheckRequest, context: Any
    ) -> external_auth_pb2.CheckResponse:
        self.requests.append(request)
        headers = request.attributes.request.http.headers
        state = request.attributes.metadata_context.filter_metadata.get(STATE_NAMESPACE)
        returned = struct_pb2.Struct()
        returned.update({**(json_format.MessageToDict(state) if state else {}), "grpc_seen": True})
        metadata = struct_pb2.Struct()
        metadata.fields[STATE_NAMESPACE].struct_value.CopyFrom(returned)
        if headers.get("authorization") == ALLOW:
            return external_auth_pb2.CheckResponse(
                status=status_pb2.Status(code=code_pb2.OK),
                ok_response=external_auth_pb2.OkHttpResponse(
                    headers=[
                        base_pb2.HeaderValueOption(
                            header=base_pb2.HeaderValue(
                                key="x-auth-user", value=headers.get("x-user", "nobody")
                            )
                        )
                    ]
                ),
                dynamic_metadata=metadata,
            )
        status = None if headers.get("authorization") == "deny quietly" else 401
        denied = external_auth_pb2.DeniedHttpResponse(body="denied by the grpc service")
        if status is not None:
            denied.status.CopyFrom(http_status_pb2.HttpStatus(code=status))
        return external_auth_pb2.CheckResponse(
            status=status_pb2.Status(code=code_pb2.PERMISSION_DENIED), denied_response=denied
        )


class GrpcAuthService:
    def __init__(self) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.requests: list[external_auth_pb2.CheckRequest] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        external_auth_pb2_grpc.add_AuthorizationServicer_to_server(
            _Checker(self.requests), self.server
        )
        self.server.add_insecure_port(self.address)
        self.server.start()

    def stop(self) -> None:
        self.server.stop(grace=None)
