"""The gateway answering a health check path itself."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class ListenerHealthCheck:
    """Requests for exactly `path` are answered by the proxy, never forwarded: 200 while it
    serves, 503 once it is draining or an operator failed it (`/healthcheck/fail` on the
    admin port), so that a load balancer takes it out of rotation first."""

    path: str
