"""Upstreams → clusters.

A static upstream with IP hosts becomes a STATIC cluster; with any host name, Envoy
resolves the names itself (STRICT_DNS). An `orch` upstream becomes an EDS cluster selecting
a service port (`orch.py`; endpoints from `endpoints.py`); a `pipe` upstream a STATIC
cluster on a Unix socket; an `aws` upstream a cluster to the region's Lambda endpoint
(`aws.py`); an `azure` upstream a cluster to the function app (`azure.py`); a `gcp`
upstream a cluster to the service, and one to the metadata server its identity tokens
come from (`gcp.py`). TLS to the upstream comes from `upstream_tls.py`,
and each option from its own module: `loadbalancer`, `healthcheck`, `outlier`,
`circuitbreakers`, `connection`, `subsets`, `failover`, `functions` (service specs).
Cluster names are `<upstream>_<namespace>`.

Kinds and fields that need what stock Envoy (or this machine) does not have are refused by
name, with what they would need, so that no field is accepted and then ignored.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Literal

from gw.api import ResourceKey, Upstream
from gw.api.tls import UpstreamSslConfig
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.envoy.names import reserved_cluster_problem
from gw.translator.gateway.aws import check_aws_upstream
from gw.translator.gateway.azure import check_azure_upstream
from gw.translator.gateway.circuitbreakers import build_circuit_breakers
from gw.translator.gateway.connection import with_connection, with_dns
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.failover import build_failover
from gw.translator.gateway.functions import service_spec_wants_http2
from gw.translator.gateway.gcp import check_gcp_upstream, gcp_audience, with_metadata_cluster
from gw.translator.gateway.headers import HeaderSecrets
from gw.translator.gateway.healthcheck import build_health_checks
from gw.translator.gateway.hosts import checked_address, endpoint_metadata, is_ip
from gw.translator.gateway.loadbalancer import build_load_balancer
from gw.translator.gateway.orch import build_orch_selection
from gw.translator.gateway.outlier import build_outlier_detection
from gw.translator.gateway.subsets import build_subsets, subset_spec_of
from gw.translator.gateway.upstream_tls import build_upstream_tls, host_sni
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

__all__ = ["build_cluster", "build_upstreams", "cluster_name", "is_ip"]

#: Upstream kinds gw refuses, with what they need.
REFUSED_KINDS = {
    "awsEc2": "it needs EC2 instance discovery through the AWS API, which stock Envoy does "
    "not do; list the instances as static hosts instead",
    "consul": "it needs a Consul catalog client to discover the service's instances; list "
    "them as static hosts instead",
    "ai": "it needs the enterprise AI gateway extensions (prompt guards, enrichment, "
    "provider APIs)",
}
#: What an upstream without `sslConfig` has.
NO_SSL_CONFIG = UpstreamSslConfig()


def cluster_name(name: str, namespace: str) -> str:
    """`<name>_<namespace>`, interned: every route to the Upstream keeps the same string."""
    return sys.intern(f"{name}_{namespace}")


def build_upstreams(
    snapshot: Snapshot, refs: Refs, reports: Reports, options: Options
) -> dict[ResourceKey, Contribution]:
    out: dict[ResourceKey, Contribution] = {}
    for upstream in snapshot.of_kind(Upstream):
        report = reports.of(upstream.key)
        built = build_cluster(upstream, refs, report, options)
        if built is not None and not report.errors:
            cluster, secrets = built
            clusters = with_metadata_cluster(cluster, options)
            out[upstream.key] = Contribution(clusters=clusters, secrets=secrets)
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
    kinds = [
        name
        for name, value in (
            ("static", spec.static),
            ("orch", spec.orch),
            ("pipe", spec.pipe),
            ("aws", spec.aws),
            ("azure", spec.azure),
            ("gcp", spec.gcp),
            ("awsEc2", spec.aws_ec2),
            ("consul", spec.consul),
            ("ai", spec.ai),
        )
        if value is not None
    ]
    if len(kinds) != 1:
        found = " and ".join(kinds) if kinds else "none"
        report.error(
            "spec",
            "an Upstream needs exactly one of static, orch, pipe, aws, azure or gcp "
            f"(found {found})",
        )
        return None
    if kinds[0] in REFUSED_KINDS:
        report.error(f"spec.{kinds[0]}", f"not supported in gw: {REFUSED_KINDS[kinds[0]]}")
        return None
    _refuse_unsupported_fields(upstream, report)
    grpc = service_spec_wants_http2(upstream, report)
    tls, secrets = build_upstream_tls(upstream, refs=refs, report=report, clock=Clock(options.now))
    cluster = _located(upstream, refs, report)
    if cluster is None:
        return None
    cloud = any(kind is not None for kind in (spec.aws, spec.azure, spec.gcp))
    if cloud and (tls is None or tls.sni is None):  # HTTPS, to a service found by its name
        host = cluster.endpoints[0].address
        tls = replace(tls or ir.UpstreamTls(), sni=None if is_ip(host) else host)
    cluster = _with_host_names(replace(cluster, tls=tls), upstream)
    cluster = with_connection(cluster, spec, report, http2=grpc)
    cluster = _with_health(cluster, upstream, refs, report)
    cluster = with_dns(cluster, spec, report)
    return cluster, secrets


def _with_host_names(cluster: ir.Cluster, upstream: Upstream) -> ir.Cluster:
    """Static hosts whose TLS server names differ each get theirs (`autoSniRewrite`,
    `sniAddr`); `sslConfig.sni` is one name for all."""
    static = upstream.spec.static
    if cluster.tls is None or static is None or (upstream.spec.ssl_config or NO_SSL_CONFIG).sni:
        return cluster
    names = [host_sni(static, host) for host in static.hosts]
    if len(set(names)) < 2 or len(names) != len(cluster.endpoints):
        return cluster
    endpoints = (replace(e, sni=n) for e, n in zip(cluster.endpoints, names, strict=True))
    return replace(cluster, endpoints=tuple(endpoints))


def _located(upstream: Upstream, refs: Refs, report: ResourceReport) -> ir.Cluster | None:
    """The cluster with where its endpoints are (before any option applies)."""
    spec = upstream.spec
    meta = upstream.metadata
    service: ir.ServiceSelection | None = None
    endpoints: tuple[ir.Endpoint, ...] = ()
    discovery: Literal["static", "dns", "eds"] = "eds"
    subsets = build_subsets(subset_spec_of(upstream), _subset_field(upstream), report)
    if spec.orch is not None:
        service = build_orch_selection(upstream, spec.orch, refs=refs, report=report)
        if service is None:
            return None
        if subsets is not None:
            service = replace(service, labels=True)
    elif spec.pipe is not None:
        if not spec.pipe.path.startswith("/"):
            report.error("spec.pipe.path", "the Unix socket path must be absolute (/run/app.sock)")
            return None
        endpoints = (ir.Endpoint(address=spec.pipe.path, port=0, pipe=True),)
        discovery = "static"
    else:  # hosts, or the one endpoint of a cloud service
        endpoints = (
            check_aws_upstream(upstream, refs, report)
            if spec.aws is not None
            else check_azure_upstream(upstream, refs, report)
            if spec.azure is not None
            else check_gcp_upstream(upstream, report)
            if spec.gcp is not None
            else _static_endpoints(upstream, report)
        )
        if not endpoints:
            return None
        discovery = "static" if all(is_ip(e.address) for e in endpoints) else "dns"
    return ir.Cluster(
        name=cluster_name(meta.name, meta.namespace),
        source=ir.SourceRef(kind=Upstream.KIND, namespace=meta.namespace, name=meta.name),
        discovery=discovery,
        endpoints=endpoints,
        service=service,
        subsets=subsets,
        aws_lambda=True if spec.aws is not None else None,
        gcp_audience=gcp_audience(spec.gcp) if spec.gcp is not None else None,
    )


def _with_health(
    cluster: ir.Cluster, upstream: Upstream, refs: Refs, report: ResourceReport
) -> ir.Cluster:
    """Load balancing, health checking, circuit breakers and failover."""
    spec = upstream.spec
    secrets = HeaderSecrets(refs, upstream.key)
    checks = build_health_checks(spec.health_checks, "spec.healthChecks", report, secrets)
    for i, check in enumerate(checks):
        if check.grpc is not None and not (cluster.http2 or cluster.use_downstream_protocol):
            report.error(
                f"spec.healthChecks[{i}].grpcHealthCheck",
                "gRPC health checks need the upstream to speak HTTP/2: set useHttp2: true",
            )
    outlier = build_outlier_detection(spec.outlier_detection, "spec.outlierDetection", report)
    failover, factor = build_failover(
        spec.failover, "spec.failover", report, checked=bool(checks or outlier)
    )
    discovery = cluster.discovery
    if any(not is_ip(e.address) for e in failover):
        if discovery == "eds":
            report.error(
                "spec.failover",
                "failover endpoints of an orch upstream must be IP addresses: Envoy does not "
                "resolve the names of endpoints the control plane sends",
            )
        discovery = "dns" if discovery == "static" else discovery
    balancer = build_load_balancer(spec.load_balancer_config, "spec.loadBalancerConfig", report)
    hashing = bool(balancer and balancer.use_hostname_for_hashing)
    if hashing and discovery != "dns":
        report.error(
            "spec.loadBalancerConfig.useHostnameForHashing",
            "Envoy hashes by host name only when it resolves the hosts' names: give the "
            "static hosts as names, or leave useHostnameForHashing unset",
        )
    if spec.static is not None and (checks or hashing):
        # As the established gateway does: a host's name is its hash key, and the Host of
        # its HTTP health checks unless the first check sets one.
        host = next((c.http.host for c in checks[:1] if c.http is not None and c.http.host), None)
        cluster = replace(
            cluster,
            endpoints=tuple(
                replace(
                    e,
                    hostname=e.address if hashing else None,
                    health_check_hostname=(host or e.address) if checks else None,
                )
                for e in cluster.endpoints
            ),
        )
    return replace(
        cluster,
        discovery=discovery,
        load_balancer=balancer,
        health_checks=checks or None,
        outlier_detection=outlier,
        circuit_breakers=build_circuit_breakers(spec.circuit_breakers),
        failover=failover or None,
        overprovisioning_factor=factor,
    )


def _refuse_unsupported_fields(upstream: Upstream, report: ResourceReport) -> None:
    spec = upstream.spec
    tunnel = (
        ("httpProxyHostname", spec.http_proxy_hostname),
        ("httpConnectSslConfig", spec.http_connect_ssl_config),
        ("httpConnectHeaders", spec.http_connect_headers or None),
    )
    for name, value in tunnel:
        if value is not None:
            report.error(
                f"spec.{name}",
                f"{name} is not supported in gw: tunnelling to the upstream through an HTTP "
                "CONNECT proxy needs Envoy internal listeners, which gw's proxies do not run",
            )
    if spec.disable_istio_auto_mtls is not None:
        report.warning(
            "spec.disableIstioAutoMtls",
            "no effect: gw never sets up Istio automatic mutual TLS for upstreams",
        )
    for i, host in enumerate(spec.static.hosts if spec.static else ()):
        if host.health_check_config is not None:
            report.error(
                f"spec.static.hosts[{i}].healthCheckConfig",
                "a health check path or method per host is not supported in gw: it needs the "
                "enterprise advanced HTTP health checker; use healthChecks[].httpHealthCheck, "
                "which applies to every host",
            )


def _subset_field(upstream: Upstream) -> str:
    return "spec.orch.subsetSpec" if upstream.spec.orch is not None else "spec.static.subsetSpec"


def _static_endpoints(upstream: Upstream, report: ResourceReport) -> tuple[ir.Endpoint, ...]:
    assert upstream.spec.static is not None
    hosts = upstream.spec.static.hosts
    if not hosts:
        report.error("spec.static.hosts", "a static upstream needs at least one host")
        return ()
    endpoints = []
    for i, host in enumerate(hosts):
        addr = checked_address(host.addr, host.port, f"spec.static.hosts[{i}]", report)
        if addr is not None:
            endpoints.append(
                ir.Endpoint(
                    address=addr,
                    port=host.port,
                    weight=host.load_balancing_weight,
                    metadata=endpoint_metadata(host.metadata),
                )
            )
    return tuple(endpoints)
