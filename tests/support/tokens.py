"""JWTs made in the tests with a real JOSE library (PyJWT), and a key-set server.

`SigningKey` holds a fresh private key (RSA or EC) and signs tokens with it; its public half
goes into manifests as PEM or into a JWKS served by `JwksServer` (a small `http.server` in a
thread, standing in for an identity provider's key endpoint, which cannot run here).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa


@dataclass
class SigningKey:
    kind: str = "RSA"
    kid: str | None = None
    private: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey = field(init=False)

    def __post_init__(self) -> None:
        if self.kind == "RSA":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())

    @property
    def algorithm(self) -> str:
        return "RS256" if self.kind == "RSA" else "ES256"

    def public_pem(self) -> str:
        return (
            self.private.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )

    def jwk(self) -> dict[str, Any]:
        """The public key as a JWK with `kid`, `alg` and `use`, as identity providers serve."""
        data: dict[str, Any] = json.loads(
            jwt.algorithms.get_default_algorithms()[self.algorithm].to_jwk(
                self.private.public_key()
            )
        )
        data.update(alg=self.algorithm, use="sig")
        if self.kid is not None:
            data["kid"] = self.kid
        return data

    def sign(self, claims: dict[str, Any], **extra_headers: Any) -> str:
        headers = dict(extra_headers)
        if self.kid is not None:
            headers.setdefault("kid", self.kid)
        return jwt.encode(claims, self.private, algorithm=self.algorithm, headers=headers or None)

    def token(self, issuer: str, **claims: Any) -> str:
        """A token valid for ten minutes from `issuer`, with `claims` (None removes one)."""
        now = int(time.time())
        body: dict[str, Any] = {"iss": issuer, "sub": "alice", "iat": now, "exp": now + 600}
        body.update(claims)
        return self.sign({k: v for k, v in body.items() if v is not None})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned_token(claims: dict[str, Any]) -> str:
    """`alg: none`, as PyJWT writes it (an empty signature part)."""
    return jwt.encode(claims, "", algorithm="none")


def hs256_with_public_key(key: SigningKey, claims: dict[str, Any]) -> str:
    """The classic key-confusion attack: HS256, the RSA public key (PEM) as the HMAC secret.
    Built by hand because JOSE libraries rightly refuse a PEM as an HMAC key."""
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64(json.dumps(claims).encode())
    signing_input = f"{header}.{payload}".encode()
    mac = hmac.new(key.public_pem().encode(), signing_input, hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(mac)}"


def tampered(token: str, **changes: Any) -> str:
    """The same header and signature around a payload with `changes` applied."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    return f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"


class JwksServer:
    """Serves `{"keys": [...]}` at any path on 127.0.0.1:`port`; `keys` may be replaced
    while it runs (key rotation). `fetches` counts the requests it answered."""

    def __init__(self, port: int = 0, keys: list[dict[str, Any]] | None = None) -> None:
        self.keys: list[dict[str, Any]] = list(keys or [])
        self.fetches = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps({"keys": server.keys}).encode()
                server.fetches += 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
