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
        return snapshot.with_resources(served) if served else snapshot
