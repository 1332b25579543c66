"""A recording HTTP upstream for end-to-end tests: a test peer outside the product that
answers every request with 200 and keeps what it received (method, path, headers, body),
so a test can see requests the client never sees the answer of (shadowed copies)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Recorder:
    """Listens on a free loopback port (`port`) until `stop()`."""

    def __init__(self, name: str = "recorder") -> None:
        self.name = name
        self.received: list[Received] = []
        self._lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _record(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                with recorder._lock:
                    recorder.received.append(Received(self.command, self.path, headers, body))
                answer = recorder.name.encode()
                self.send_response(200)
                self.send_header("content-type", "text/plain")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_GET = do_POST = do_PUT = do_DELETE = _record  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def requests(self, path_prefix: str = "") -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path.startswith(path_prefix)]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
