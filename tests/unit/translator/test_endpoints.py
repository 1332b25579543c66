"""Endpoints of a service port, from Endpoints and Pods (REFERENCE.md §3.4)."""

from __future__ import annotations

import yaml

from gw.api import parse_document
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.endpoints import service_endpoints
from gw.translator.reports import ResourceReport


def snapshot(text: str) -> Snapshot:
    resources = [parse_document(doc) for doc in yaml.safe_load_all(text)]
    return Snapshot(resources={r.key: r for r in resources})


def endpoints(text: str, port: int = 80, selector: dict[str, str] | None = None) -> list[str]:
    selection = ir.ServiceSelection(
        namespace="default",
        name="web",
        port=port,
        selector=tuple(sorted((selector or {}).items())),
    )
    report = ResourceReport()
    found = service_endpoints(snapshot(text), selection, report)
    assert report.warnings == ()
    return [f"{e.address}:{e.port}" for e in found]


SERVICE = """
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {selector: {app: web}, ports: %s}
"""


def test_a_single_port_service_takes_the_only_subset_port_whatever_its_name() -> None:
    text = (
        (SERVICE % "[{name: http, port: 80}]")
        + """---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets:
  - addresses: [{ip: 10.0.0.2}, {ip: 10.0.0.1}, {ip: 10.0.0.1}]
    notReadyAddresses: [{ip: 10.0.0.3}]
    ports: [{name: something-else, port: 8080}]
"""
    )
    assert endpoints(text) == ["10.0.0.1:8080", "10.0.0.2:8080"]
    assert endpoints(text, port=81) == []


def test_several_ports_match_by_name() -> None:
    text = (
        (SERVICE % "[{name: http, port: 80}, {name: admin, port: 81}]")
        + """---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets:
  - addresses: [{ip: 10.0.0.1}]
    ports: [{name: admin, port: 9001}, {name: http, port: 8080}]
  - addresses: [{ip: 10.0.0.2}]
    ports: [{name: other, port: 7000}]
"""
    )
    assert endpoints(text) == ["10.0.0.1:8080"]
    assert endpoints(text, port=81) == ["10.0.0.1:9001"]


def test_an_upstream_selector_keeps_pods_with_its_labels() -> None:
    text = (
        (SERVICE % "[{port: 80}]")
        + """---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default}
subsets:
  - addresses: [{ip: 10.0.0.1}, {ip: 10.0.0.2}, {ip: 10.0.0.3}]
    ports: [{port: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {app: web, track: canary}}
status: {phase: Running, podIP: 10.0.0.1}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default, labels: {app: web}}
status: {phase: Running, podIP: 10.0.0.2}
"""
    )
    assert endpoints(text, selector={"app": "web", "track": "canary"}) == ["10.0.0.1:8080"]
    # The service's own selector needs no pods: every endpoint carries it.
    assert endpoints(text, selector={"app": "web"}) == [
        "10.0.0.1:8080",
        "10.0.0.2:8080",
        "10.0.0.3:8080",
    ]


def test_without_endpoints_ready_pods_on_the_target_port() -> None:
    text = (
        (SERVICE % "[{port: 80, targetPort: 8080}]")
        + """---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, labels: {app: web}}
status: {phase: Running, podIP: 10.0.0.1}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: other, labels: {app: web}}
status: {phase: Running, podIP: 10.0.0.2}
---
apiVersion: v1
kind: Pod
metadata: {name: c, namespace: default, labels: {app: web}}
status: {phase: Succeeded, podIP: 10.0.0.3}
"""
    )
    assert endpoints(text) == ["10.0.0.1:8080"]
