"""Sending one explained request through the proxy, and what came back: what `gwctl explain
--send` and the console's "send it" button do after the prediction.

Kept apart from `gw.explain`, which does no I/O. The request goes to the proxy's listener as
the explanation describes it (its `Host` header and TLS server name as given); certificates
are not checked: this is a probe, and test certificates are self-signed.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from gw.explain.request import Request

#: Response headers worth showing from a sent request.
SHOWN_HEADERS = (
    "location",
    "content-type",
    "www-authenticate",
    "x-envoy-upstream-service-time",
    "x-echo-name",
)
#: How much of an answer's body is kept.
BODY_KEPT = 2000


@dataclass(frozen=True, slots=True)
class Sent:
    """What the proxy answered a request explain sent."""

    status: int | None
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""
    #: The proxy forwarded it (Envoy adds `x-envoy-upstream-service-time` to what an
    #: upstream answered).
    upstream: bool = False
    error: str = ""


def send(request: Request, origin: str, *, timeout: float = 10) -> Sent:
    """Send `request` to `origin` (`http://127.0.0.1:8080`: where the proxy's listener
    is reached), with the request's own `Host` header and SNI."""
    headers = [("host", request.authority), *request.headers]
    extensions = {"sni_hostname": request.sni} if request.tls and request.sni else {}
    try:
        with httpx.Client(verify=False, timeout=timeout) as client:  # noqa: S501 (a probe)
            response = client.request(
                request.method, origin + request.target, headers=headers, extensions=extensions
            )
    except httpx.HTTPError as exc:
        return Sent(None, error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    shown = tuple((h, response.headers[h]) for h in SHOWN_HEADERS if h in response.headers)
    return Sent(
        status=response.status_code,
        headers=shown,
        body=response.text[:BODY_KEPT],
        upstream="x-envoy-upstream-service-time" in response.headers,
    )


def origin(scheme: str, host: str, port: int) -> str:
    """`scheme://host:port`, an IPv6 host in brackets."""
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}"
