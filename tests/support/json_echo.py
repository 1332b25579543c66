"""An upstream shaped like the public echo service the established gateway's guides use:
it answers with JSON holding the request's `args`, `headers`, `url`, `method` and `data`
(the body, parsed when it is JSON). `x-respond-status: N` answers with status N; the
response's `x-request-path` header is the path it received.

Runs in a thread of the test process (a stand-in for the guides' public service, which is
out of reach here).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.support.processes import GwUp


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        text = raw.decode("utf-8", errors="replace")
        try:
            data: object = json.loads(text) if text else {}
        except ValueError:
            data = text
        parts = urlsplit(self.path)
        body = json.dumps(
            {
                "args": dict(parse_qsl(parts.query)),
                "data": data,
                "body": text,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "method": self.command,
                "url": f"http://{self.headers.get('host', '')}{self.path}",
            }
        ).encode()
        self.send_response(int(self.headers.get("x-respond-status") or 200))
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.send_header("x-request-path", parts.path)
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


class JsonEcho:
    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def gw_with_echo(
    work: Path, manifests: Callable[[int], list[str]], accepted: list[str], env: dict[str, str]
) -> Iterator[GwUp]:
    """`gw up` serving `manifests(echo_port)`, with `env` in its (and Envoy's) environment,
    once every resource key in `accepted` is Accepted; both stopped at the end."""
    echo = JsonEcho()
    try:
        folder = work / "config"
        folder.mkdir()
        (folder / "config.yaml").write_text("---".join(manifests(echo.port)))
        with pytest.MonkeyPatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            up = GwUp(folder, work / "home")
        try:
            for key in accepted:
                up.wait_status(key, "Accepted")
            yield up
        finally:
            up.stop()
    finally:
        echo.stop()
