"""Endpoints of EDS clusters, from the orchestrator's Endpoints and Pods (REFERENCE.md §3.4).

Endpoints are live state, not configuration: they are filled in while the Proxy is
assembled (`proxies.assemble`), from the current snapshot, for every cluster that selects a
service port, even one kept from a rejected resource's last accepted version. Since the
Cluster messages do not depend on them, an endpoint change reaches Envoy as an EDS update
only.

For a service port:
- the Endpoints object of the service's name gives the ready `addresses` of each subset
  (never `notReadyAddresses`), on the subset port whose name is the service port's name
  (or the subset's only port when the service has one port);
- without an Endpoints object (a folder that holds only Pods), the running, ready pods
  matching the service's selector, on the service's `targetPort` (a number, or the name of a
  container port);
- an upstream `selector` keeps only addresses whose pod carries its labels. Labels the
  service selector already demands hold for every endpoint and need no pod;
- for an upstream with subsets, each endpoint carries its pod's labels (`envoy.lb`
  metadata), which the subset load balancer matches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from gw import api
from gw.api import ResourceKey
from gw.api.orch import (
    Endpoints,
    EndpointSubset,
    ObjectReference,
    Pod,
    Service,
    ServicePort,
)
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.hosts import endpoint_metadata, is_ip
from gw.translator.gateway.orch import input_error
from gw.translator.gateway.subsets import LB_METADATA
from gw.translator.reports import Reports, ResourceReport

#: A candidate endpoint: address, port, and the pod behind it when known.
_Candidate = tuple[str, int, Pod | None]


def with_endpoints(cluster: ir.Cluster, snapshot: Snapshot, reports: Reports) -> ir.Cluster:
    """The cluster with the endpoints of the service port it selects (the same object when
    it selects none); problems are warnings on the Upstream it comes from."""
    if cluster.service is None:
        return cluster
    source = cluster.source
    report = (
        reports.of(ResourceKey(source.kind, source.namespace, source.name))
        if source.kind == api.Upstream.KIND
        else None
    )
    found = service_endpoints(snapshot, cluster.service, report)
    return dataclasses.replace(cluster, endpoints=found)


def service_endpoints(
    snapshot: Snapshot, selection: ir.ServiceSelection, report: ResourceReport | None
) -> tuple[ir.Endpoint, ...]:
    """The ready endpoints `selection` picks, sorted; problems become warnings on `report`."""
    service = snapshot.get(Service, selection.namespace, selection.name)
    port = service.port(selection.port) if service is not None else None
    if service is None or port is None:
        return ()
    where = f"{selection.namespace}.{selection.name}"
    endpoints = snapshot.get(Endpoints, selection.namespace, selection.name)
    if endpoints is not None:
        candidates = list(_from_endpoints(snapshot, endpoints, service, port))
    else:
        key = ResourceKey(Endpoints.KIND, selection.namespace, selection.name)
        problem = input_error(snapshot, key)
        if problem is not None:
            _warn(report, f"Endpoints {where} cannot be read ({problem}); no endpoints from it")
            return ()
        candidates = list(_from_pods(snapshot, service, port))
    extra = {k: v for k, v in selection.selector if service.spec.selector.get(k) != v}
    found: dict[tuple[str, int], tuple[tuple[str, str], ...] | None] = {}
    for address, number, pod in candidates:
        if extra and (
            pod is None or any(pod.metadata.labels.get(k) != v for k, v in extra.items())
        ):
            continue
        if not is_ip(address):
            _warn(report, f"Endpoints {where}: {address!r} is not an IP address; skipped")
            continue
        found[(address, number)] = _subset_labels(pod, service) if selection.labels else None
    return tuple(ir.Endpoint(address=a, port=p, metadata=found[(a, p)]) for a, p in sorted(found))


def _subset_labels(pod: Pod | None, service: Service) -> tuple[tuple[str, str], ...] | None:
    """The pod's labels as subset metadata; without the Pod, the labels the service's
    selector guarantees."""
    labels = pod.metadata.labels if pod is not None else service.spec.selector
    return endpoint_metadata({LB_METADATA: dict(labels)})


def _from_endpoints(
    snapshot: Snapshot, endpoints: Endpoints, service: Service, port: ServicePort
) -> Iterator[_Candidate]:
    for subset in endpoints.subsets:
        number = _subset_port(subset, service, port)
        if number is None:
            continue
        for address in subset.addresses:
            yield address.ip, number, _pod_of(snapshot, service, address.ip, address.target_ref)


def _subset_port(subset: EndpointSubset, service: Service, port: ServicePort) -> int | None:
    if len(service.spec.ports) == 1 and len(subset.ports) == 1:
        return subset.ports[0].port
    return next((p.port for p in subset.ports if p.name == port.name), None)


def _pod_of(
    snapshot: Snapshot, service: Service, ip: str, target: ObjectReference | None
) -> Pod | None:
    namespace = service.metadata.namespace
    if target is not None and target.kind == Pod.KIND and target.name:
        return snapshot.get(Pod, target.namespace or namespace, target.name)
    return next(
        (
            p
            for p in snapshot.of_kind(Pod)
            if p.metadata.namespace == namespace and p.status.pod_ip == ip
        ),
        None,
    )


def _from_pods(snapshot: Snapshot, service: Service, port: ServicePort) -> Iterator[_Candidate]:
    """What the orchestrator's endpoints controller would list, for folders without Endpoints."""
    selector = service.spec.selector
    if not selector:
        return  # a service without a selector has only the endpoints written for it
    for pod in snapshot.of_kind(Pod):
        if pod.metadata.namespace != service.metadata.namespace or not pod.ready:
            continue
        if any(pod.metadata.labels.get(k) != v for k, v in selector.items()):
            continue
        number = _target_port(pod, port)
        if number is not None and pod.status.pod_ip:
            yield pod.status.pod_ip, number, pod


def _target_port(pod: Pod, port: ServicePort) -> int | None:
    target = port.target_port
    if target is None:
        return port.port
    if isinstance(target, int):
        return target
    if target.isdigit():
        return int(target)
    for container in pod.spec.containers:
        for container_port in container.ports:
            if container_port.name == target:
                return container_port.container_port
    return None


def _warn(report: ResourceReport | None, message: str) -> None:
    if report is not None:
        report.warning("spec.orch", message)
