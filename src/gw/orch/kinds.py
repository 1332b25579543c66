"""What `OrchStore` watches: each kind gw reads, and the client's resource type for it.

gw's own kinds are custom resources (`gw crds`); Services, Endpoints, Pods, ConfigMaps and
Secrets are the orchestrator's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lightkube.generic_resource import create_namespaced_resource
from lightkube.resources import core_v1

from gw import api
from gw.api.crd import CRD_KINDS, crd_name, group_of, version_of
from gw.api.meta import Resource


@dataclass(frozen=True, slots=True)
class WatchedKind:
    model: type[Resource]
    resource: Any  # the client's resource class
    #: gw's kinds: their `status` is written by gw (never read back), through `/status`.
    custom: bool

    @property
    def name(self) -> str:
        """`virtualservices.gateway.vendor.io`, or `services` for the orchestrator's kinds."""
        return crd_name(self.model) if self.custom else self.model.PLURAL


def _custom(model: type[Resource]) -> WatchedKind:
    resource = create_namespaced_resource(
        group_of(model), version_of(model), model.KIND, model.PLURAL
    )
    return WatchedKind(model, resource, custom=True)


WATCHED: tuple[WatchedKind, ...] = (
    # Proxies are written by gw, never read (kept in memory: docs/gateways.md).
    *(_custom(model) for model in CRD_KINDS if model is not api.Proxy),
    WatchedKind(api.Secret, core_v1.Secret, custom=False),
    WatchedKind(api.Service, core_v1.Service, custom=False),
    WatchedKind(api.Endpoints, core_v1.Endpoints, custom=False),
    WatchedKind(api.Pod, core_v1.Pod, custom=False),
    WatchedKind(api.ConfigMap, core_v1.ConfigMap, custom=False),
)
BY_KIND = {w.model.KIND: w for w in WATCHED}
