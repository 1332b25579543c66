"""`faults` on a route: abort or delay a share of its requests (fault injection)."""

from __future__ import annotations

from gw.api.duration import Duration
from gw.api.meta import Model


class RouteAbort(Model):
    #: Share of requests answered with `httpStatus`, 0.0 to 100.0.
    percentage: float = 0.0
    http_status: int = 0


class RouteDelay(Model):
    #: Share of requests held for `fixedDelay` before they are forwarded, 0.0 to 100.0.
    percentage: float = 0.0
    fixed_delay: Duration | None = None


class RouteFaults(Model):
    abort: RouteAbort | None = None
    delay: RouteDelay | None = None
