"""HTTP/1.1 on a raw socket: requests no HTTP client library would send (two `Host`
headers, a header split by a CR, a PROXY protocol preamble, a request cut short), and the
responses parsed back, however many arrive on the connection. Loopback only."""

from __future__ import annotations

import http.client
import io
import json
import socket
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def echoed(self, name: str) -> dict[str, Any] | None:
        """What the `gw echo` upstream called `name` received, when the answer comes from it."""
        if self.headers.get("x-echo-name") != name:
            return None
        data: dict[str, Any] = json.loads(self.body)
        return data


class _Bytes(io.BytesIO):
    """What was received, read response after response (HTTPResponse closes its file)."""

    def close(self) -> None:
        pass

    def makefile(self, mode: str) -> _Bytes:
        return self


def send(
    port: int, raw: bytes, answers: int = 1, *, to_the_end: bool = False, timeout: float = 5
) -> list[Answer]:
    """Send `raw` on a new connection to 127.0.0.1:`port`; the responses read until `answers`
    arrived or one says `connection: close` (`to_the_end`: until the server closes the
    connection, so that nothing it answers after the first responses goes unseen)."""
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        while chunk := sock.recv(65536):
            received += chunk
            out, closing = _parse(received)
            if not to_the_end and out is not None and (len(out) >= answers or closing):
                return out[:answers]
    out, _ = _parse(received)
    assert out is not None, f"a truncated response: {received[:200]!r}"
    return out


def one(port: int, raw: bytes, *, timeout: float = 5) -> Answer:
    answers = send(port, raw, timeout=timeout)
    assert len(answers) == 1, answers
    return answers[0]


def _parse(received: bytes) -> tuple[list[Answer] | None, bool]:
    """The responses in `received` (None while the last one is incomplete), and whether
    the last one announces that the connection closes."""
    stream = _Bytes(received)
    out: list[Answer] = []
    closing = False
    while stream.tell() < len(received):
        if b"\r\n\r\n" not in received[stream.tell() :]:
            return None, False
        response = http.client.HTTPResponse(stream)  # type: ignore[arg-type]
        response.begin()
        try:
            body = response.read()
        except http.client.IncompleteRead:
            return None, False
        headers = {k.lower(): v for k, v in response.getheaders()}
        out.append(Answer(response.status, headers, body))
        closing = headers.get("connection", "").lower() == "close"
    return out, closing


def get(path: str, *lines: str, version: str = "HTTP/1.1") -> bytes:
    """A GET with `lines` as its headers, closing the connection after the answer."""
    head = [f"GET {path} {version}", *lines, "Connection: close", "", ""]
    return "\r\n".join(head).encode()
