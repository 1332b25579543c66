"""Services → Upstreams: one `orch` Upstream per service port, and who owns which.

`discover()` is pure: it reads a snapshot and says which upstreams discovery generates now,
which generated names a stored upstream holds instead (a hand-edited or hand-written one,
which discovery never overwrites), and which stored upstreams discovery generated once for a
service port that is gone.

Ownership is told by content, not by where a manifest lives: a generated upstream carries
the label `discovered_by: orchplugin` and the annotation `discovery.vendor.io/generated-hash`,
the hash of what discovery generated. An upstream whose content no longer matches its hash
was edited by hand and belongs to the user from then on.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from gw import api
from gw.api import Metadata, ResourceKey
from gw.api.orch import Service, ServicePort, service_upstream_name
from gw.api.settings import SettingsSpec
from gw.api.upstream import DiscoveryMetadata, OrchSpec, UpstreamSpec
from gw.snapshot import Snapshot

OWNER_LABEL = "discovered_by"
OWNER = "orchplugin"
HASH_ANNOTATION = "discovery.vendor.io/generated-hash"
#: `"true"` discovers a service even in an ignored namespace; `"false"` never discovers it.
DISCOVER_ANNOTATION = "gw.vendor.io/discover"
#: The orchestrator's own namespaces, skipped unless a service asks to be discovered.
IGNORED_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
SETTINGS_NAME = "default"


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found in one snapshot."""

    #: Every upstream discovery generates now, by key.
    generated: dict[ResourceKey, api.Upstream] = field(default_factory=dict)
    #: Generated keys held by a stored upstream discovery does not own, or by a manifest
    #: that does not parse: left as they are.
    kept: frozenset[ResourceKey] = frozenset()
    #: Stored upstreams discovery owns whose service port is gone (a service whose manifest
    #: does not parse is not gone).
    stale: frozenset[ResourceKey] = frozenset()

    @property
    def served(self) -> dict[ResourceKey, api.Upstream]:
        """The generated upstreams that take their place in the snapshot."""
        return {k: u for k, u in self.generated.items() if k not in self.kept}


def discover(snapshot: Snapshot, namespace: str) -> Discovery:
    """The upstreams for every watched service in `snapshot`.

    `namespace` is the gateway namespace; Settings `discoveryNamespace` overrides it as the
    place discovered upstreams are written.
    """
    settings = _settings(snapshot, namespace)
    target = settings.discovery_namespace or namespace
    uds = settings.discovery.uds_options if settings.discovery else None
    generated: dict[ResourceKey, api.Upstream] = {}
    if uds is None or uds.enabled is not False:
        watch_labels = uds.watch_labels if uds else {}
        # Empty watchNamespaces: every namespace. Else those, and the discovery namespace.
        watched = set(settings.watch_namespaces)
        if watched:
            watched.add(target)
        for service in snapshot.of_kind(Service):
            if not _watched(service, watched, watch_labels):
                continue
            for port in service.spec.ports:
                if port.protocol.upper() != "TCP":
                    continue  # the proxy speaks HTTP over TCP only
                upstream = generate_upstream(service, port, target)
                generated.setdefault(upstream.key, upstream)
    # A manifest that claims the name but does not parse is the user's too: replacing it with
    # a generated upstream would hide its error (found by the reliability suite's property
    # tests); the translator rejects it and keeps serving its last accepted version instead.
    broken = {e.key for e in snapshot.errors if e.key is not None}
    kept = frozenset(
        key
        for key in generated
        if key in broken or (key in snapshot.resources and not owned(snapshot.resources[key]))
    )
    unreadable = unreadable_services(snapshot)
    stale = frozenset(
        r.key
        for r in snapshot.of_kind(api.Upstream)
        if r.key not in generated and owned(r) and service_of(r) not in unreadable
    )
    return Discovery(generated=generated, kept=kept, stale=stale)


def service_of(upstream: api.Upstream) -> ResourceKey | None:
    """The Service an `orch` upstream selects."""
    orch = upstream.spec.orch
    if orch is None:
        return None
    return ResourceKey(Service.KIND, orch.service_namespace, orch.service_name)


def unreadable_services(snapshot: Snapshot) -> frozenset[ResourceKey]:
    """Services whose manifest is there but does not parse: not gone, only broken."""
    return frozenset(
        e.key for e in snapshot.errors if e.key is not None and e.key.kind == Service.KIND
    )


def generate_upstream(service: Service, port: ServicePort, namespace: str) -> api.Upstream:
    """The upstream for one service port, with its ownership hash."""
    meta = service.metadata
    upstream = api.Upstream(
        api_version=api.Upstream.API_VERSION,
        kind=api.Upstream.KIND,
        metadata=Metadata(
            name=service_upstream_name(meta.namespace, meta.name, port.port),
            namespace=namespace,
            labels={OWNER_LABEL: OWNER},
        ),
        spec=UpstreamSpec(
            orch=OrchSpec(
                service_name=meta.name,
                service_namespace=meta.namespace,
                service_port=port.port,
                selector=dict(service.spec.selector),
            ),
            discovery_metadata=DiscoveryMetadata(labels=dict(meta.labels)) if meta.labels else None,
        ),
    )
    annotations = {HASH_ANNOTATION: content_hash(upstream)}
    metadata = upstream.metadata.model_copy(update={"annotations": annotations})
    return upstream.model_copy(update={"metadata": metadata})


def content_hash(upstream: api.Upstream) -> str:
    """A hash of everything a user may edit: labels, annotations (but this hash) and spec."""
    meta = upstream.metadata
    data = {
        "name": meta.name,
        "namespace": meta.namespace,
        "labels": meta.labels,
        "annotations": {k: v for k, v in meta.annotations.items() if k != HASH_ANNOTATION},
        "spec": upstream.spec.model_dump(by_alias=True, exclude_defaults=True, mode="json"),
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def owned(resource: api.Resource) -> bool:
    """True when discovery generated `resource` and nobody has edited it since."""
    if not isinstance(resource, api.Upstream):
        return False
    meta = resource.metadata
    recorded = meta.annotations.get(HASH_ANNOTATION)
    return (
        meta.labels.get(OWNER_LABEL) == OWNER
        and recorded is not None
        and recorded == content_hash(resource)
    )


def _settings(snapshot: Snapshot, namespace: str) -> SettingsSpec:
    settings = snapshot.get(api.Settings, namespace, SETTINGS_NAME)
    return settings.spec if settings is not None else SettingsSpec()


def _watched(service: Service, namespaces: set[str], labels: dict[str, str]) -> bool:
    meta = service.metadata
    wish = meta.annotations.get(DISCOVER_ANNOTATION, "").lower()
    if wish == "false":
        return False
    if wish == "true":
        return True
    if namespaces and meta.namespace not in namespaces:
        return False
    if meta.namespace in IGNORED_NAMESPACES:
        return False
    return all(meta.labels.get(k) == v for k, v in labels.items())
