"""Live traffic from the proxy's own statistics: requests per second, 4xx and 5xx per
second, and p50/p99 latency, per listener and per route, over the last minutes.

The numbers are Envoy's, read from its admin interface (`/stats?format=json`), which only a
control plane on the proxy's machine reaches (`gw up`); elsewhere the console says so.
Sampling happens while someone looks: each view of the traffic page (its script asks every
few seconds) takes a sample when the last one is older than `MIN_INTERVAL`, and the last
`KEPT` samples make the charts. Nothing runs when nobody looks.

What Envoy counts where:

- a listener's connection manager (`http.<listener>.downstream_rq_*`) counts every request,
  including those a filter answers (a JWT `401`, an RBAC `403`, a rate limit's `429`);
- a route has counters of its own (`vhost.<host>.route.<route>.upstream_rq_*`) only when
  per-route statistics are on (`gw up --route-stats`), and they count what went upstream;
- otherwise a route that forwards to one cluster shows that cluster's counters
  (`cluster.<name>.upstream_rq_*`), shared with every route that forwards there;
- latencies are Envoy's histograms (`*_rq_time`, milliseconds) over its last flush interval.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

#: Seconds between two samples at least (the page asks every 2 seconds).
MIN_INTERVAL = 1.0
#: Samples kept (about 5 minutes at one every 2 seconds).
KEPT = 150
#: What is asked of Envoy: request counters and times of connection managers, clusters
#: and routes (RE2, as Envoy's `filter` takes it).
STATS_FILTER = r"^(http|cluster|vhost)\..*\.(downstream|upstream)_rq_(total|4xx|5xx|time)$"


@dataclass(frozen=True, slots=True)
class Sample:
    #: `time.monotonic()` when taken.
    at: float
    counters: Mapping[str, int]
    #: Histogram name → (p50, p99) over Envoy's last interval; None when it saw nothing.
    quantiles: Mapping[str, tuple[float | None, float | None]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """One thing's traffic over the samples: one value per pair of consecutive samples
    (rates) or per sample after the first (latencies); None where unknown."""

    rps: tuple[float | None, ...]
    rps_4xx: tuple[float | None, ...]
    rps_5xx: tuple[float | None, ...]
    p50: tuple[float | None, ...]
    p99: tuple[float | None, ...]

    @property
    def latest(self) -> dict[str, float | None]:
        def last(values: tuple[float | None, ...]) -> float | None:
            return next((v for v in reversed(values) if v is not None), None)

        return {
            "rps": last(self.rps),
            "4xx": last(self.rps_4xx),
            "5xx": last(self.rps_5xx),
            "p50": last(self.p50),
            "p99": last(self.p99),
        }

    @property
    def busy(self) -> bool:
        """It saw requests during the samples kept."""
        return any(v for v in self.rps)


class Sampler:
    """Samples of one proxy's statistics; `admin_url` None: none can be taken here."""

    def __init__(self, admin_url: str | None, *, kept: int = KEPT) -> None:
        self.admin_url = admin_url
        self.samples: deque[Sample] = deque(maxlen=kept)
        #: Why the last sample failed (None: it did not).
        self.error: str | None = None
        #: Several viewers at once take one sample, not one each.
        self._taking = asyncio.Lock()

    async def refresh(self) -> None:
        """Take a sample unless the last one is recent."""
        if self.admin_url is None:
            return
        async with self._taking:
            if self.samples and time.monotonic() - self.samples[-1].at < MIN_INTERVAL:
                return
            await self._take(self.admin_url)

    async def _take(self, admin_url: str) -> None:
        try:
            async with httpx.AsyncClient(timeout=3) as client:
                response = await client.get(
                    admin_url + "/stats",
                    params={"format": "json", "usedonly": "", "filter": STATS_FILTER},
                )
            response.raise_for_status()
            self.samples.append(parse_stats(response.json(), time.monotonic()))
            self.error = None
        except (httpx.HTTPError, ValueError) as exc:
            self.error = f"the proxy's statistics could not be read: {exc or type(exc).__name__}"


def parse_stats(data: Mapping[str, Any], at: float) -> Sample:
    """Envoy's `/stats?format=json` answer as a sample."""
    counters: dict[str, int] = {}
    quantiles: dict[str, tuple[float | None, float | None]] = {}
    for stat in data.get("stats", []):
        if "name" in stat and isinstance(stat.get("value"), int):
            counters[stat["name"]] = stat["value"]
        histograms = stat.get("histograms")
        if not isinstance(histograms, dict):
            continue
        supported = list(histograms.get("supported_quantiles", []))
        for histogram in histograms.get("computed_quantiles", []):
            values = histogram.get("values", [])
            quantiles[histogram["name"]] = (
                _interval(values, supported, 50),
                _interval(values, supported, 99),
            )
    return Sample(at=at, counters=counters, quantiles=quantiles)


def _interval(
    values: Sequence[Mapping[str, Any]], supported: list[float], q: float
) -> float | None:
    if q not in supported:
        return None
    value = values[supported.index(q)].get("interval")
    return float(value) if isinstance(value, int | float) else None


def series(samples: Sequence[Sample], base: str, direction: str) -> Series:
    """The traffic of the stats under `base` (`cluster.x.`, `http.listener.`, ...);
    `direction` is `downstream` (listeners) or `upstream` (clusters, routes)."""
    prefix = f"{base}{direction}_rq_"

    def rates(suffix: str) -> tuple[float | None, ...]:
        name = prefix + suffix
        out: list[float | None] = []
        for before, after in zip(samples, samples[1:], strict=False):
            delta = after.counters.get(name, 0) - before.counters.get(name, 0)
            seconds = after.at - before.at
            out.append(delta / seconds if delta >= 0 and seconds > 0 else None)
        return tuple(out)

    times = [s.quantiles.get(prefix + "time", (None, None)) for s in samples[1:]]
    return Series(
        rps=rates("total"),
        rps_4xx=rates("4xx"),
        rps_5xx=rates("5xx"),
        p50=tuple(t[0] for t in times),
        p99=tuple(t[1] for t in times),
    )


def stat_name(name: str) -> str:
    """A cluster, host or route name as it appears in a statistic's name (Envoy writes
    `_` for `:`)."""
    return name.replace(":", "_")
