"""The traffic options of routes, virtual hosts and weighted destinations, one holder per
level so that the tree (`routes`, `virtualhosts`) gains one field each. Each option is its
feature's type (`faults`, `shadowing`, `rewrite`, `timeouts`, `upgrades`, `csrf`, `buffer`,
`extproc`, `routetracing`); a route's replaces its virtual host's for the per-filter ones
(csrf, buffer, extproc: Envoy reads the most specific config)."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.buffer import BufferLimit
from gw.translator.ir.csrf import CsrfPolicy
from gw.translator.ir.extproc import ExtProcRoute
from gw.translator.ir.faults import Faults
from gw.translator.ir.headers import HeaderManipulation
from gw.translator.ir.rewrite import Rewrites
from gw.translator.ir.routetracing import RouteTracing
from gw.translator.ir.shadowing import Shadow
from gw.translator.ir.stats import VirtualCluster
from gw.translator.ir.timeouts import StreamTimeouts
from gw.translator.ir.upgrades import Upgrade


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteTraffic:
    """A route's. The first five apply to forwarded requests only."""

    rewrites: Rewrites | None = None
    timeouts: StreamTimeouts | None = None
    shadow: Shadow | None = None
    upgrades: tuple[Upgrade, ...] = ()
    faults: Faults | None = None
    csrf: CsrfPolicy | None = None
    buffer: BufferLimit | None = None
    ext_proc: tuple[ExtProcRoute, ...] = ()
    tracing: RouteTracing | None = None
    #: `envoyMetadata`: (namespace, JSON object text with sorted keys), sorted.
    metadata: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HostTraffic:
    """A virtual host's."""

    csrf: CsrfPolicy | None = None
    buffer: BufferLimit | None = None
    ext_proc: tuple[ExtProcRoute, ...] = ()
    #: `x-envoy-attempt-count` sent upstream / downstream.
    request_attempt_count: bool = False
    attempt_count_in_response: bool = False
    #: `stats.virtualClusters`.
    virtual_clusters: tuple[VirtualCluster, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class DestinationTraffic:
    """A weighted destination's: replaces the route's for requests sent to it."""

    headers: HeaderManipulation | None = None
    csrf: CsrfPolicy | None = None
    buffer: BufferLimit | None = None
