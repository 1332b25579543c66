"""A route forwarded by Envoy's dynamic forward proxy: to the host the request names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class DynamicForwardProxy:
    #: Forward to this host (and rewrite the Host to it).
    host_rewrite: str | None = None
    #: Forward to the host in this request header (and rewrite the Host to it).
    host_header: str | None = None
