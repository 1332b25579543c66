"""Orchestrator services as destinations: `orch` Upstreams and `routeAction.single.orch`.

Both become EDS clusters that select one service port (`ir.ServiceSelection`); their
endpoints are filled in by `endpoints.with_endpoints` from the current Endpoints and Pods.

- An Upstream's `spec.orch` names the service and its port. A service that does not exist
  (yet) is a warning: the cluster is served without endpoints and answers 503 until it
  appears. A port the service does not have is an error: the upstream is misconfigured.
- A route's `orch` destination resolves to the in-memory upstream
  `orch-svc:<ns>-<svc>-<port>` (REFERENCE.md §3.3). A missing service or port is the
  established route warning; the route points at a cluster that is not there (503).
"""

from __future__ import annotations

import dataclasses

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.orch import Service, service_destination_name
from gw.api.upstream import OrchSpec
from gw.api.virtualservice import OrchDestination
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def envoy_cluster_name(upstream: str, namespace: str) -> str:
    """`<upstream>_<namespace>`, with `:` (in `orch-svc:` names) made `_` as Envoy stats do."""
    return f"{upstream}_{namespace}".replace(":", "_")


def build_orch_selection(
    upstream: api.Upstream,
    orch: OrchSpec,
    *,
    refs: Refs,
    report: ResourceReport,
) -> ir.ServiceSelection | None:
    """The service port an `orch` upstream selects, or None after an error."""
    field = "spec.orch"
    if not 1 <= orch.service_port <= 65535:
        report.error(f"{field}.servicePort", f"port {orch.service_port} is not between 1 and 65535")
        return None
    ref = ResourceRef(name=orch.service_name, namespace=orch.service_namespace)
    service = refs.resolve(Service, ref, referrer=upstream.key, field=f"{field}.serviceName")
    key = refs.key(Service, ref, upstream.key)
    selection = ir.ServiceSelection(
        namespace=key.namespace,
        name=key.name,
        port=orch.service_port,
        selector=tuple(sorted(orch.selector.items())),
    )
    if service is None:
        if not refs.exists(key):  # a manifest that does not parse is reported through refs
            report.warning(
                f"{field}.serviceName",
                f"service {key.namespace}.{key.name} not found: the upstream has no "
                "endpoints until it exists",
            )
        return selection
    if service.port(orch.service_port) is None:
        meta = upstream.metadata
        report.error(
            f"{field}.servicePort",
            f"upstream {meta.namespace}.{meta.name}: port {orch.service_port} not found for "
            f"service {key.name} ({_ports_hint(service)})",
        )
        return None
    return selection


def resolve_service_destination(
    dest: OrchDestination,
    *,
    refs: Refs,
    referrer: ResourceKey,
    field: str,
    report: ResourceReport,
    enabled: bool = True,
) -> ir.WeightedCluster | None:
    """The cluster of a route's `orch` destination (weight 1), or None after an error.
    Not `enabled` (Settings `gloo.disableKubernetesDestinations`), there are no in-memory
    upstreams: the destination is not found, as in the established gateway."""
    port = _destination_port(dest, field, report)
    if port is None:
        return None
    ref = ResourceRef(name=dest.ref.name, namespace=dest.ref.namespace)
    if not enabled:
        key = refs.key(Service, ref, referrer)
        upstream = service_destination_name(key.namespace, key.name, port)
        report.warning(
            f"{field}.ref",
            f"Route Warning: InvalidDestinationWarning. Reason: *v1.Upstream "
            f"{{ {key.namespace}.{upstream} }} not found; Settings gloo."
            "disableKubernetesDestinations is true: route to an Upstream instead",
        )
        return ir.WeightedCluster(cluster=envoy_cluster_name(upstream, key.namespace))
    service = refs.resolve(Service, ref, referrer=referrer, field=f"{field}.ref")
    key = refs.key(Service, ref, referrer)
    upstream = service_destination_name(key.namespace, key.name, port)
    cluster = envoy_cluster_name(upstream, key.namespace)
    if service is None and refs.exists(key):
        return ir.WeightedCluster(cluster=cluster)  # its bad manifest is reported through refs
    if service is None or service.port(port) is None:
        hint = (
            f"service {key.namespace}.{key.name} has no port {port} ({_ports_hint(service)})"
            if service is not None
            else f"there is no service {key.namespace}.{key.name} with port {port}"
        )
        report.warning(
            f"{field}.ref",
            f"Route Warning: InvalidDestinationWarning. Reason: *v1.Upstream "
            f"{{ {key.namespace}.{upstream} }} not found; {hint}",
        )
        return ir.WeightedCluster(cluster=cluster)
    selection = ir.ServiceSelection(namespace=key.namespace, name=key.name, port=port)
    return ir.WeightedCluster(cluster=cluster, service=selection)


def add_service_clusters(contributions: dict[ResourceKey, Contribution]) -> None:
    """Give each contribution the clusters of the services its routes address directly.

    The cluster belongs to the contribution of the route, so that a rejected virtual
    service's last accepted routes keep their clusters."""
    for key, contribution in list(contributions.items()):
        found: dict[str, ir.Cluster] = {}
        for _, vhost in contribution.virtual_hosts:
            for route in vhost.routes:
                if not isinstance(route.action, ir.Forward):
                    continue
                for target in route.action.clusters:
                    if target.service is not None and target.cluster not in found:
                        found[target.cluster] = service_cluster(target.cluster, target.service)
        if found:
            contributions[key] = dataclasses.replace(
                contribution, clusters=contribution.clusters + tuple(found.values())
            )


def service_cluster(name: str, service: ir.ServiceSelection) -> ir.Cluster:
    return ir.Cluster(
        name=name,
        source=ir.SourceRef(kind=Service.KIND, namespace=service.namespace, name=service.name),
        discovery="eds",
        endpoints=(),
        service=service,
    )


def input_error(snapshot: Snapshot, key: ResourceKey) -> str | None:
    """Why the manifest of `key` could not be read, when it could not."""
    for error in snapshot.errors:
        if error.key == key:
            return str(error)
    return None


def _destination_port(dest: OrchDestination, field: str, report: ResourceReport) -> int | None:
    """SPEC.md puts the port in `ref`; the established API beside it. Either, not both."""
    inside, beside = dest.ref.port, dest.port
    if inside is not None and beside is not None and inside != beside:
        report.error(
            f"{field}.port",
            f"the port is given twice, {inside} in ref.port and {beside} in port; keep one",
        )
        return None
    port = inside if inside is not None else beside
    if port is None:
        report.error(f"{field}.ref.port", "an orch destination needs the service port")
        return None
    if not 1 <= port <= 65535:
        report.error(f"{field}.ref.port", f"port {port} is not between 1 and 65535")
        return None
    return port


def _ports_hint(service: Service | None) -> str:
    ports = [str(p.port) for p in service.spec.ports] if service is not None else []
    return f"its ports: {', '.join(ports)}" if ports else "it has no ports"
