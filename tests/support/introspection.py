"""`IntrospectionServer`: an OAuth 2.0 token introspection endpoint (RFC 7662) for the
access-token tests, a test peer outside the product: `oidc-provider-mock`, the real provider
of the other tests, has no introspection endpoint (it serves discovery, keys, tokens and
userinfo). It is a small `http.server` in a thread on a free loopback port.

It knows the tokens the test `register`s (any string: a real provider's access token, or
one `issue` makes up) with their claims, and answers `{"active": false}` for every other.
Clients authenticate with HTTP Basic (`client_id` / `client_secret`; a wrong pair gets 401)
unless it was made without a secret. `requests` counts the introspections it answered
(caching is visible); `failing` makes it answer 500.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


class IntrospectionServer:
    def __init__(self, client_id: str, client_secret: str | None) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.tokens: dict[str, dict[str, Any]] = {}
        self.requests = 0
        self.failing = False
        self.last_form: dict[str, str] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                status, body = server.answer(self.headers.get("authorization"), form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self._httpd.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/oauth2/introspect"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def register(self, token: str, **claims: Any) -> str:
        """`token` is active with `claims` (an `exp` ten minutes away unless given)."""
        self.tokens[token] = {"exp": int(time.time()) + 600, **claims}
        return token

    def issue(self, **claims: Any) -> str:
        return self.register("opaque-" + secrets.token_urlsafe(24), **claims)

    def answer(self, authorization: str | None, form: dict[str, str]) -> tuple[int, Any]:
        self.requests += 1
        self.last_form = form
        if self.failing:
            return 500, {"error": "server_error"}
        if self.client_secret is not None:
            expected = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode())
            if authorization != f"Basic {expected.decode()}":
                return 401, {"error": "invalid_client"}
        claims = self.tokens.get(form.get("token", ""))
        if claims is None or claims["exp"] < time.time():
            return 200, {"active": False}
        return 200, {"active": True, "client_id": self.client_id, **claims}

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
