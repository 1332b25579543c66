"""`/metrics`: the control plane in Prometheus text format.

State (translations so far, snapshot versions, connected proxies, NACKs, resources by
status) is read at scrape time from the control plane and the xDS server, so it can never
drift from what `/proxies` and `/statuses` show. Durations are histograms fed by the
control plane's translation traces. Each app has its own registry: nothing global, so
several control planes (tests) never share counters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gw import supervision
from gw.api.status import State
from gw.controlplane import ControlPlane
from gw.tracing import Trace
from gw.xds.cache import version_of
from gw.xds.server import AdsServer

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: `gw_resource_config_status` values, as the established gateway's status metric uses them.
STATUS_VALUES = {State.ACCEPTED: 0, State.REJECTED: 1, State.WARNING: 2, State.PENDING: 3}

#: Spans that make up a translation proper (the store read and debounce wait are not).
TRANSLATION_STAGES = ("discovery", "translate", "publish")

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    def __init__(self, controlplane: ControlPlane, ads: AdsServer) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.translation_seconds = Histogram(
            "gw_translation_duration_seconds",
            "Time to translate one snapshot and publish it (discovery, translate, publish).",
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.stage_seconds = Histogram(
            "gw_translation_stage_duration_seconds",
            "Time spent in each stage of a translation (store, debounce, discovery, "
            "translate, publish).",
            ["stage"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_StateCollector(controlplane, ads))
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        controlplane.observers.append(self.observe)

    def observe(self, trace: Trace) -> None:
        if trace.error is not None:
            return
        for span in trace.spans:
            self.stage_seconds.labels(span.name).observe(span.duration)
        self.translation_seconds.observe(
            sum(s.duration for s in trace.spans if s.name in TRANSLATION_STAGES)
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _StateCollector(Collector):
    def __init__(self, controlplane: ControlPlane, ads: AdsServer) -> None:
        self.controlplane = controlplane
        self.ads = ads

    def collect(self) -> Iterable[Metric]:
        yield from self._translation()
        yield from self._snapshots()
        yield from self._proxies()
        yield from self._resources()
        yield from self._tasks()

    def _tasks(self) -> Iterable[Metric]:
        crashes = CounterMetricFamily(
            "gw_task_crashes",
            "Crashes of each supervised long-running task (each a bug; the task restarted).",
            labels=["task"],
        )
        for health in supervision.TASKS.tasks.values():
            crashes.add_metric([health.name], health.crashes)
        yield crashes

    def _translation(self) -> Iterable[Metric]:
        translation = self.controlplane.translation
        yield CounterMetricFamily(
            "gw_translations", "Snapshots translated successfully.", value=translation.count
        )
        yield CounterMetricFamily(
            "gw_translation_failures",
            "Translations that raised (a bug; the last good config kept serving).",
            value=translation.failures,
        )
        yield GaugeMetricFamily(
            "gw_last_translation_timestamp_seconds",
            "When the last successful translation finished (Unix time).",
            value=translation.last_at,
        )

    def _snapshots(self) -> Iterable[Metric]:
        versions = GaugeMetricFamily(
            "gw_snapshot_version_info",
            "Version (content hash) of the xDS resources of each type served to a proxy role.",
            labels=["role", "type", "version"],
        )
        counts = GaugeMetricFamily(
            "gw_snapshot_resources",
            "Number of xDS resources of each type served to a proxy role.",
            labels=["role", "type"],
        )
        cache = self.controlplane.cache
        for role in cache.roles():
            snapshot = cache.get(role)
            if snapshot is None:
                continue
            for type_url in sorted(snapshot.entries):
                selected = snapshot.select(type_url, None)
                short = type_url.rsplit(".", 1)[-1]
                versions.add_metric([role, short, version_of(selected)], 1)
                counts.add_metric([role, short], len(selected))
        yield versions
        yield counts

    def _proxies(self) -> Iterable[Metric]:
        connected = GaugeMetricFamily(
            "gw_xds_connected_proxies", "xDS clients connected, by proxy role.", labels=["role"]
        )
        nacking = GaugeMetricFamily(
            "gw_xds_rejected_types",
            "Resource types whose latest version a connected proxy rejected (NACKed).",
            labels=["role", "node", "type"],
        )
        roles: Counter[str] = Counter()
        for conn in list(self.ads.connections.values()):
            roles[conn.role or "unknown"] += 1
            for type_url, state in sorted(conn.types.items()):
                if state.nack is not None:
                    nacking.add_metric([conn.role, conn.node_id, type_url.rsplit(".", 1)[-1]], 1)
        for role, count in sorted(roles.items()):
            connected.add_metric([role], count)
        yield connected
        yield nacking
        yield CounterMetricFamily(
            "gw_xds_nacks", "Configuration updates rejected by proxies.", value=self.ads.nack_count
        )

    def _resources(self) -> Iterable[Metric]:
        by_state = GaugeMetricFamily(
            "gw_resources", "Resources by kind and status.", labels=["kind", "state"]
        )
        each = GaugeMetricFamily(
            "gw_resource_config_status",
            "Status of each resource: 0 Accepted, 1 Rejected, 2 Warning, 3 Pending.",
            labels=["kind", "namespace", "name"],
        )
        counts: Counter[tuple[str, str]] = Counter()
        for key, status in sorted(self.controlplane.store.statuses.all().items()):
            counts[(key.kind, status.state.value)] += 1
            each.add_metric([key.kind, key.namespace, key.name], STATUS_VALUES[status.state])
        for (kind, state), count in sorted(counts.items()):
            by_state.add_metric([kind, state], count)
        snapshot = self.controlplane.snapshot
        unreadable = [e for e in (snapshot.errors if snapshot else ()) if e.key is None]
        yield by_state
        yield each
        yield GaugeMetricFamily(
            "gw_input_errors",
            "Manifests that could not be read at all (no resource to put a status on).",
            value=len(unreadable),
        )
