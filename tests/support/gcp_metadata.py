"""A stand-in for Google's metadata server, which exists only on Google Cloud machines: it
is outside the product (the proxy is its client, as any workload on Google Cloud is), so the
gcp tests run this one on loopback instead.

It answers what Google's answers for an identity token: `GET
/computeMetadata/v1/instance/service-accounts/default/identity?audience=<audience>` with
the header `Metadata-Flavor: Google` gets a signed JWT (RS256, `aud` the audience, valid
for an hour) as the plain-text body; without the header, 403. An audience listed in
`refused` gets 404, as for a service account that may not mint it. Every request is kept
in `requests` (path, headers), and the last token per audience in `tokens`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.support.ports import free_port
from tests.support.tokens import SigningKey

IDENTITY_PATH = "/computeMetadata/v1/instance/service-accounts/default/identity"


@dataclass
class MetadataRequest:
    path: str
    headers: dict[str, str]


@dataclass
class MetadataServer:
    refused: frozenset[str] = frozenset()
    key: SigningKey = field(default_factory=SigningKey)
    requests: list[MetadataRequest] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.port = free_port()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append(MetadataRequest(self.path, headers))
                status, body = outer.answer(self.path, headers)
                self.send_response(status)
                self.send_header("content-type", "application/text")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
        url = urlsplit(path)
        if headers.get("metadata-flavor") != "Google":
            return 403, b"Missing Metadata-Flavor:Google header."
        audience = parse_qs(url.query).get("audience", [""])[0]
        if url.path != IDENTITY_PATH or not audience:
            return 404, b"not found"
        if audience in self.refused:
            return 404, b"the service account may not mint this audience"
        now = int(time.time())
        token = self.key.sign(
            {
                "iss": "https://accounts.google.com",
                "aud": audience,
                "sub": "107517467455664443765",
                "iat": now,
                "exp": now + 3600,
            }
        )
        self.tokens[audience] = token
        return 200, token.encode()

    def asked_for(self, audience: str) -> list[MetadataRequest]:
        return [r for r in self.requests if r.path.endswith(f"?audience={audience}")]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
