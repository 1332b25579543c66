"""The request to explain: what a client sends (method, URL, headers, cookies) and what the
connection tells the proxy (the client's address, the SNI of a TLS handshake).

`Request.parse()` takes it as an operator writes it (`GET https://shop.example.com/api -H
'x-user: 1'`): the URL's host becomes the `Host` header unless one is given, its port (or the
scheme's: 80, 443) the listener port asked for, and an `https` URL sends its host as SNI
unless it is an IP address (as clients do) or `--sni` says otherwise.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit


class RequestError(ValueError):
    """The request cannot be formed as given; the message says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    method: str
    scheme: str
    #: The `Host` header (`:authority`) as sent.
    authority: str
    #: Path and query as sent (`/api/users?id=1`).
    target: str
    #: Every header as sent, names lower-cased, in order (a name may repeat).
    headers: tuple[tuple[str, str], ...] = ()
    #: The listener port the client connects to; None: the proxy's port for the scheme.
    port: int | None = None
    source_ip: str = "127.0.0.1"
    #: The TLS server name the client sends; None: no TLS, or no SNI.
    sni: str | None = None

    @property
    def tls(self) -> bool:
        return self.scheme == "https"

    def values(self, name: str) -> list[str]:
        """Every value of a header, by lower-case name; pseudo-headers included."""
        name = name.lower()
        pseudo = {
            ":method": self.method,
            ":path": self.target,
            ":authority": self.authority,
            ":scheme": self.scheme,
        }
        if name in pseudo:
            return [pseudo[name]]
        if name == "host":
            return [self.authority]
        return [v for n, v in self.headers if n == name]

    @classmethod
    def parse(
        cls,
        method: str,
        url: str,
        headers: list[str] | tuple[str, ...] = (),
        *,
        cookies: list[str] | tuple[str, ...] = (),
        source_ip: str | None = None,
        sni: str | None = None,
    ) -> Request:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "https"):
            raise RequestError(f"{url!r}: only http and https URLs can be explained")
        if not parts.hostname:
            raise RequestError(f"{url!r} has no host")
        try:
            port = parts.port
        except ValueError:
            raise RequestError(f"{url!r} has an invalid port") from None
        pairs = [_header(h) for h in headers]
        pairs += [("cookie", c) for c in cookies]
        authority = next((v for n, v in pairs if n == "host"), parts.netloc.rpartition("@")[2])
        pairs = [(n, v) for n, v in pairs if n != "host"]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if method.upper() == "CONNECT":
            target = authority  # a CONNECT request names where to connect, not a path
        if source_ip is not None and _address(source_ip) is None:
            raise RequestError(f"--from {source_ip!r} is not an IP address")
        server_name = sni
        if server_name is None and parts.scheme == "https" and _address(parts.hostname) is None:
            server_name = parts.hostname
        return cls(
            method=method.upper(),
            scheme=parts.scheme,
            authority=authority,
            target=target,
            headers=tuple(pairs),
            port=port,
            source_ip=source_ip or "127.0.0.1",
            sni=server_name,
        )


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise RequestError(f"header {text!r} is not 'Name: value'")
    return name.strip().lower(), value.strip()


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`text` as an IP address; None when it is a name (or nothing valid)."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None
