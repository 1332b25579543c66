"""Upstreams → clusters.

A static upstream with IP hosts becomes a STATIC cluster; with any host name, Envoy
resolves the names itself (STRICT_DNS). An `orch` upstream becomes an EDS cluster selecting
a service port (`orch.py`; endpoints from `endpoints.py`). TLS to the upstream comes from
`upstream_tls.py`. Cluster names are `<upstream>_<namespace>`.
"""

from __future__ import annotations

import ipaddress
from typing import Literal

from gw.api import ResourceKey, Upstream
from gw.api.duration import duration_ms
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.envoy.names import reserved_cluster_problem
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.orch import build_orch_selection
from gw.translator.gateway.upstream_tls import build_upstream_tls
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport


def cluster_name(name: str, namespace: str) -> str:
    return f"{name}_{namespace}"


def build_upstreams(
    snapshot: Snapshot, refs: Refs, reports: Reports, options: Options
) -> dict[ResourceKey, Contribution]:
    out: dict[ResourceKey, Contribution] = {}
    for upstream in snapshot.of_kind(Upstream):
        report = reports.of(upstream.key)
        built = build_cluster(upstream, refs, report, options)
        if built is not None and not report.errors:
            cluster, secrets = built
            out[upstream.key] = Contribution(clusters=(cluster,), secrets=secrets)
    return out


def build_cluster(
    upstream: Upstream, refs: Refs, report: ResourceReport, options: Options
) -> tuple[ir.Cluster, tuple[ir.TlsSecret, ...]] | None:
    """The upstream's cluster and the secrets its TLS needs, or None after an error."""
    spec = upstream.spec
    meta = upstream.metadata
    if (reserved := reserved_cluster_problem(cluster_name(meta.name, meta.namespace))) is not None:
        report.error("metadata.name", reserved)
        return None
    kinds = [k for k in ("static", "orch") if getattr(spec, k) is not None]
    if len(kinds) != 1:
        found = " and ".join(kinds) if kinds else "neither"
        report.error("spec", f"an Upstream needs exactly one of static or orch (found {found})")
        return None
    tls, secrets = build_upstream_tls(upstream, refs=refs, report=report, clock=Clock(options.now))
    service: ir.ServiceSelection | None = None
    endpoints: tuple[ir.Endpoint, ...] = ()
    discovery: Literal["static", "dns", "eds"] = "eds"
    if spec.orch is not None:
        service = build_orch_selection(upstream, spec.orch, refs=refs, report=report)
        if service is None:
            return None
    else:
        endpoints = _static_endpoints(upstream, report)
        if not endpoints:
            return None
        discovery = "static" if all(is_ip(e.address) for e in endpoints) else "dns"
    timeout = spec.connection_config.connect_timeout if spec.connection_config else None
    cluster = ir.Cluster(
        name=cluster_name(meta.name, meta.namespace),
        source=ir.SourceRef(kind=Upstream.KIND, namespace=meta.namespace, name=meta.name),
        discovery=discovery,
        endpoints=endpoints,
        connect_timeout_ms=int(duration_ms(timeout)) if timeout else 5000,
        http2=bool(spec.use_http2),
        service=service,
        tls=tls,
    )
    return cluster, secrets


def _static_endpoints(upstream: Upstream, report: ResourceReport) -> tuple[ir.Endpoint, ...]:
    assert upstream.spec.static is not None
    hosts = upstream.spec.static.hosts
    if not hosts:
        report.error("spec.static.hosts", "a static upstream needs at least one host")
        return ()
    endpoints = []
    for i, host in enumerate(hosts):
        field = f"spec.static.hosts[{i}]"
        addr = host.addr.strip()
        if not addr:
            report.error(f"{field}.addr", "addr cannot be empty for host")
            continue
        if not is_ip(addr) and not _is_hostname(addr):
            report.error(f"{field}.addr", f"{addr!r} is neither an IP address nor a host name")
            continue
        if not 1 <= host.port <= 65535:
            report.error(f"{field}.port", f"port {host.port} is not between 1 and 65535")
            continue
        endpoints.append(
            ir.Endpoint(address=addr, port=host.port, weight=host.load_balancing_weight)
        )
    return tuple(endpoints)


def is_ip(addr: str) -> bool:
    try:
        ipaddress.ip_address(addr)
    except ValueError:
        return False
    return True


def _is_hostname(addr: str) -> bool:
    if len(addr) > 253:
        return False
    labels = addr.rstrip(".").split(".")
    return all(
        0 < len(label) <= 63
        and label[0] != "-"
        and label[-1] != "-"
        and all(c.isalnum() or c in "-_" for c in label)
        for label in labels
    )
