"""What the traffic page lists: each HTTP listener of the proxy and each route it serves,
with where its numbers come from (`traffic.py` says what Envoy counts where) and charts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.console import charts, traffic
from gw.explain.listeners import listener_address, manager_of
from gw.explain.matching import describe_match
from gw.explain.served import Served

#: Route rows shown at most (the busiest).
SHOWN = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class TrafficRow:
    label: str
    detail: str
    #: Where its numbers come from (`listener`, `route`, `cluster x, shared with ...`), or
    #: why there are none.
    counted_by: str
    series: traffic.Series | None = None

    @property
    def latest(self) -> dict[str, float | None]:
        return self.series.latest if self.series else {}

    @property
    def requests(self) -> charts.Chart | None:
        if self.series is None:
            return None
        s = self.series
        return charts.chart([("rps", s.rps), ("e4xx", s.rps_4xx), ("e5xx", s.rps_5xx)])

    @property
    def latency(self) -> charts.Chart | None:
        if self.series is None:
            return None
        return charts.chart([("p50", self.series.p50), ("p99", self.series.p99)])


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteRows:
    shown: tuple[TrafficRow, ...]
    #: Routes with numbers but no requests in the samples kept.
    quiet: int
    #: Routes Envoy keeps no numbers for (answered by the proxy itself, several clusters).
    uncounted: tuple[TrafficRow, ...]


def listener_rows(served: Served, samples: Sequence[traffic.Sample]) -> list[TrafficRow]:
    rows = []
    for listener in served.listeners:
        prefixes = {
            m.stat_prefix
            for m in (manager_of(c) for c in listener.filter_chains)
            if m is not None and m.stat_prefix
        }
        for prefix in sorted(prefixes):
            base = f"http.{traffic.stat_name(prefix)}."
            rows.append(
                TrafficRow(
                    label=listener.name,
                    detail=listener_address(listener),
                    counted_by="every request the listener took, answered by a filter or not",
                    series=traffic.series(samples, base, "downstream"),
                )
            )
    return rows


def route_rows(served: Served, samples: Sequence[traffic.Sample]) -> RouteRows:
    routes = _served_routes(served)
    users = Counter(r.route.cluster for _, r in routes if r.WhichOneof("action") == "route")
    counted: list[TrafficRow] = []
    uncounted: list[TrafficRow] = []
    for vhost, route in routes:
        label = f"{vhost} {route.name}"
        detail = describe_match(route.match)
        source = served.sources.routes.get(route.name)
        if source is not None:
            detail += f" — {source.origin.resource}"
        base, counted_by = _counted_by(vhost, route, users)
        row = TrafficRow(label=label, detail=detail, counted_by=counted_by)
        if base is None:
            uncounted.append(row)
            continue
        series = traffic.series(samples, base, "upstream")
        counted.append(TrafficRow(label=label, detail=detail, counted_by=counted_by, series=series))
    busy = [r for r in counted if r.series is not None and r.series.busy]
    busy.sort(key=lambda r: -(r.latest.get("rps") or 0.0))
    return RouteRows(
        shown=tuple(busy[:SHOWN]), quiet=len(counted) - len(busy), uncounted=tuple(uncounted)
    )


def _counted_by(vhost: str, route: rc_pb2.Route, users: Counter[str]) -> tuple[str | None, str]:
    """The statistics prefix of a route's numbers and what they count; None: none."""
    if route.stat_prefix:
        name = traffic.stat_name(route.stat_prefix)
        return f"vhost.{traffic.stat_name(vhost)}.route.{name}.", "this route (sent upstream)"
    kind = route.WhichOneof("action")
    if kind == "direct_response" or kind == "redirect":
        return None, "answered by the proxy itself: only its listener counts it"
    if route.route.HasField("weighted_clusters"):
        return None, "several clusters by weight: per-route statistics are off"
    cluster = route.route.cluster
    others = users[cluster] - 1
    shared = f", shared with {others} other route{'s' * (others != 1)}" if others else ""
    return f"cluster.{traffic.stat_name(cluster)}.", f"cluster {cluster}{shared}"


def _served_routes(served: Served) -> list[tuple[str, rc_pb2.Route]]:
    """Every (virtual host, route) served, each once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for name in sorted(served.routes):
        for vhost in served.routes[name].virtual_hosts:
            for route in vhost.routes:
                if (vhost.name, route.name) not in seen:
                    seen.add((vhost.name, route.name))
                    out.append((vhost.name, route))
    return out
