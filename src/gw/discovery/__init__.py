"""Discovery: orchestrator services → Upstreams named `<namespace>-<service>-<port>`.

It runs two ways, sharing `services.discover()`:

- inside the control plane (`gw up`, `gw controlplane`), as the pipeline stage between the
  store and the translator: `ServiceDiscovery` adds the generated upstreams to each snapshot
  in memory. Nothing is written, so a service change costs one translation, not a file
  write followed by a second one, and the watched folder is left as the user keeps it.
- alone, as `gw discovery --dir DIR` (the `discovery` deployment): `runner.run()` writes
  the generated upstreams as manifests into `DIR/discovered/`, where anyone can read and
  edit them, and removes them when their service goes; or as `gw discovery --orch`
  (`gw.orch.discovery`), which keeps them as custom resources in the cluster.

Either way a stored upstream that discovery does not own (hand-written, or generated and
then edited) wins over a generated one of the same name. Endpoints are not discovery's job:
the translator reads Endpoints and Pods directly, so an endpoint change is an EDS update.
"""

from __future__ import annotations

from gw.api import ResourceKey, Upstream
from gw.discovery.services import Discovery, discover, service_of, unreadable_services
from gw.snapshot import Snapshot

__all__ = ["Discovery", "ServiceDiscovery", "discover"]


class ServiceDiscovery:
    """The control plane's discovery stage: `snapshot → snapshot + discovered upstreams`.

    While a service's manifest does not parse, the upstreams last generated for it stay (the
    translator then rejects them, quoting the problem, and keeps serving their last accepted
    version), as any resource of a broken file does."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self._last: dict[ResourceKey, dict[ResourceKey, Upstream]] = {}
        #: The last snapshot in and out, and what was added: the next output is derived
        #: from the last one, so that the translator sees which keys changed.
        self._in: Snapshot | None = None
        self._out: Snapshot | None = None
        self._served: dict[ResourceKey, Upstream] = {}

    def __call__(self, snapshot: Snapshot) -> Snapshot:
        served = discover(snapshot, self.namespace).served
        unreadable = unreadable_services(snapshot)
        last: dict[ResourceKey, dict[ResourceKey, Upstream]] = {
            key: held for key, held in self._last.items() if key in unreadable
        }
        for key, upstream in served.items():
            service = service_of(upstream)
            if service is not None:
                last.setdefault(service, {})[key] = upstream
        for held in last.values():
            for key, upstream in held.items():
                if key not in snapshot.resources:
                    served.setdefault(key, upstream)
        self._last = last
        return self._extended(snapshot, served)

    def _extended(self, snapshot: Snapshot, served: dict[ResourceKey, Upstream]) -> Snapshot:
        """`snapshot` with the `served` upstreams (each the same object as last time when it
        is equal), derived from the last output when `snapshot` derives from the last input."""
        before = self._served
        served = {k: before[k] if before.get(k) == u else u for k, u in served.items()}
        changed = (
            snapshot.lineage.changed_since(self._in.lineage.token)
            if self._in is not None and self._out is not None
            else None
        )
        if not served:
            out = snapshot
        elif changed is None or self._out is None:
            out = snapshot.with_resources(served)
        else:
            resources = dict(snapshot.resources)
            resources.update(served)
            moved = {k for k in served.keys() | before.keys() if served.get(k) is not before.get(k)}
            out = self._out.derive(
                resources, changed | moved, sources=snapshot.sources, errors=snapshot.errors
            )
        self._in, self._out, self._served = snapshot, out, served
        return out
