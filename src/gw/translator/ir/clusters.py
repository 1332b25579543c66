"""Clusters: an Upstream (or a service a route addresses directly), its endpoints and how
Envoy connects to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir.source import SourceRef
from gw.translator.ir.tls import UpstreamTls


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceSelection:
    """The endpoints of an EDS cluster: the ready addresses behind one port of an
    orchestrator service, narrowed to pods carrying every `selector` label when it is set."""

    namespace: str
    name: str
    port: int
    selector: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    address: str
    port: int
    weight: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Cluster:
    """An Upstream (or a service addressed directly). `name` is `<upstream>_<namespace>`.

    `discovery`: `static` for IP hosts, `dns` for host names (Envoy resolves them), `eds`
    for endpoints pushed by the control plane as they change: those of `service`, filled in
    from the current Endpoints and Pods on every translation.
    """

    name: str
    source: SourceRef
    discovery: Literal["static", "dns", "eds"]
    endpoints: tuple[Endpoint, ...]
    connect_timeout_ms: int = 5000
    http2: bool = False
    service: ServiceSelection | None = None
    tls: UpstreamTls | None = None
