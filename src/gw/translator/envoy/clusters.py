"""IR clusters → Envoy clusters and, for EDS clusters, their load assignments.

An EDS cluster's message holds nothing about its endpoints, so that an endpoint change
changes only its ClusterLoadAssignment. TLS to the upstream is an `UpstreamTlsContext`
transport socket whose key material comes over SDS by name (`secrets.py`). Each option has
its module: `connection`, `loadbalancer` (and subsets), `healthcheck` (and outlier
detection), `circuitbreakers`, `aws`, `gcp`.
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, base_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2
from envoy.extensions.clusters.common.dns.v3 import dns_pb2
from envoy.extensions.clusters.dns.v3 import dns_cluster_pb2
from envoy.extensions.transport_sockets.tls.v3 import common_pb2, secret_pb2, tls_pb2
from envoy.type.matcher.v3 import string_pb2
from google.protobuf import struct_pb2, wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.aws import cluster_metadata
from gw.translator.envoy.circuitbreakers import add_circuit_breakers
from gw.translator.envoy.connection import add_connection, with_proxy_protocol
from gw.translator.envoy.durations import duration_ms
from gw.translator.envoy.gcp import add_audience
from gw.translator.envoy.healthcheck import add_health_checks
from gw.translator.envoy.loadbalancer import add_load_balancer, add_subsets, endpoint_metadata
from gw.translator.envoy.packing import pack
from gw.translator.envoy.secrets import validation_context_name

DNS_CLUSTER = "envoy.cluster.dns"
#: The endpoint metadata that picks one of a cluster's transport sockets, and its key.
TRANSPORT_SOCKET_MATCH = "envoy.transport_socket_match"
SNI_MATCH = "sni"


def build_cluster(cluster: ir.Cluster) -> cluster_pb2.Cluster:
    out = cluster_pb2.Cluster(
        name=cluster.name,
        connect_timeout=duration_ms(cluster.connect_timeout_ms),
    )
    if cluster.discovery == "eds":
        out.type = cluster_pb2.Cluster.EDS
        out.eds_cluster_config.eds_config.CopyFrom(names.ads_config_source())
    else:
        if cluster.discovery == "static":
            out.type = cluster_pb2.Cluster.STATIC
        elif cluster.dns is None:
            out.type = cluster_pb2.Cluster.STRICT_DNS
            out.dns_lookup_family = cluster_pb2.Cluster.V4_PREFERRED
        else:
            out.cluster_type.CopyFrom(_dns_cluster(cluster.dns))
        out.load_assignment.CopyFrom(build_load_assignment(cluster))
    add_connection(out, cluster)
    add_load_balancer(out, cluster.load_balancer)
    add_subsets(out, cluster.subsets)
    add_health_checks(out, cluster)
    add_circuit_breakers(out, cluster.circuit_breakers)
    if cluster.ignore_health_on_host_removal:
        out.ignore_health_on_host_removal = True
    socket = with_proxy_protocol(_tls_socket(cluster.tls), cluster.proxy_protocol)
    if socket is not None:
        out.transport_socket.CopyFrom(socket)
    for sni in sorted({e.sni for e in cluster.endpoints if e.sni}):
        # Hosts that differ in their server name each get their TLS settings by name.
        per_host = replace(cluster.tls, sni=sni) if cluster.tls is not None else None
        out.transport_socket_matches.append(
            cluster_pb2.Cluster.TransportSocketMatch(
                name=f"sni:{sni}",
                match=_struct({SNI_MATCH: sni}),
                transport_socket=with_proxy_protocol(_tls_socket(per_host), cluster.proxy_protocol),
            )
        )
    metadata = cluster_metadata(cluster)
    if metadata is not None:
        out.metadata.CopyFrom(metadata)
    add_audience(out, cluster)
    return out


def _tls_socket(tls: ir.UpstreamTls | None) -> base_pb2.TransportSocket | None:
    if tls is None:
        return None
    return base_pb2.TransportSocket(
        name=names.TLS_TRANSPORT_SOCKET, typed_config=pack(build_upstream_tls(tls))
    )


def _struct(values: dict[str, str]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(values)
    return out


def _dns_cluster(dns: ir.DnsOptions) -> cluster_pb2.Cluster.CustomClusterType:
    """Envoy resolves the hosts' names, with the upstream's refresh settings."""
    config = dns_cluster_pb2.DnsCluster(
        respect_dns_ttl=dns.respect_ttl, dns_lookup_family=dns_pb2.V4_PREFERRED
    )
    if dns.refresh_rate_ms is not None:
        config.dns_refresh_rate.CopyFrom(duration_ms(dns.refresh_rate_ms))
    return cluster_pb2.Cluster.CustomClusterType(name=DNS_CLUSTER, typed_config=pack(config))


def build_upstream_tls(tls: ir.UpstreamTls) -> tls_pb2.UpstreamTlsContext:
    common = tls_pb2.CommonTlsContext(alpn_protocols=list(tls.alpn_protocols))
    if tls.min_version or tls.max_version or tls.cipher_suites or tls.ecdh_curves:
        common.tls_params.CopyFrom(
            common_pb2.TlsParameters(
                tls_minimum_protocol_version=_TLS_VERSION[tls.min_version or "TLS_AUTO"],
                tls_maximum_protocol_version=_TLS_VERSION[tls.max_version or "TLS_AUTO"],
                cipher_suites=list(tls.cipher_suites),
                ecdh_curves=list(tls.ecdh_curves),
            )
        )
    if tls.certificate_secret:
        common.tls_certificate_sds_secret_configs.append(_sds(tls.certificate_secret))
    elif tls.certificate_file and tls.private_key_file:
        common.tls_certificates.append(
            common_pb2.TlsCertificate(
                certificate_chain=base_pb2.DataSource(filename=tls.certificate_file),
                private_key=base_pb2.DataSource(filename=tls.private_key_file),
            )
        )
    sans = [_san_matcher(name) for name in tls.verify_subject_alt_names]
    if tls.ca_secret:
        sds = _sds(validation_context_name(tls.ca_secret))
        if sans:
            common.combined_validation_context.CopyFrom(
                tls_pb2.CommonTlsContext.CombinedCertificateValidationContext(
                    default_validation_context=common_pb2.CertificateValidationContext(
                        match_typed_subject_alt_names=sans
                    ),
                    validation_context_sds_secret_config=sds,
                )
            )
        else:
            common.validation_context_sds_secret_config.CopyFrom(sds)
    elif tls.ca_file:
        common.validation_context.CopyFrom(
            common_pb2.CertificateValidationContext(
                trusted_ca=base_pb2.DataSource(filename=tls.ca_file),
                match_typed_subject_alt_names=sans,
            )
        )
    return tls_pb2.UpstreamTlsContext(
        common_tls_context=common,
        sni=tls.sni or "",
        allow_renegotiation=tls.allow_renegotiation,
    )


_TLS_VERSION = {name: value for name, value in common_pb2.TlsParameters.TlsProtocol.items()}


def _sds(name: str) -> secret_pb2.SdsSecretConfig:
    return secret_pb2.SdsSecretConfig(name=name, sds_config=names.ads_config_source())


def _san_matcher(name: str) -> common_pb2.SubjectAltNameMatcher:
    """A DNS name, or an IP address when the value is one."""
    try:
        ipaddress.ip_address(name)
        san_type = common_pb2.SubjectAltNameMatcher.IP_ADDRESS
    except ValueError:
        san_type = common_pb2.SubjectAltNameMatcher.DNS
    return common_pb2.SubjectAltNameMatcher(
        san_type=san_type, matcher=string_pb2.StringMatcher(exact=name)
    )


def build_load_assignment(cluster: ir.Cluster) -> endpoint_pb2.ClusterLoadAssignment:
    """The endpoints (priority 0) and the failover ones, grouped by priority and locality."""
    groups: dict[tuple[int, ir.Locality | None, int | None], list[ir.Endpoint]] = {}
    for endpoint in (*cluster.endpoints, *(cluster.failover or ())):
        key = (endpoint.priority or 0, endpoint.locality, endpoint.locality_weight)
        groups.setdefault(key, []).append(endpoint)
    out = endpoint_pb2.ClusterLoadAssignment(cluster_name=cluster.name)
    for (priority, locality, weight), endpoints in groups.items():
        group = endpoint_components_pb2.LocalityLbEndpoints(
            lb_endpoints=[_lb_endpoint(e) for e in endpoints], priority=priority
        )
        if locality is not None:
            group.locality.CopyFrom(
                base_pb2.Locality(
                    region=locality.region, zone=locality.zone, sub_zone=locality.sub_zone
                )
            )
        if weight is not None:
            group.load_balancing_weight.value = weight
        out.endpoints.append(group)
    if cluster.overprovisioning_factor is not None:
        out.policy.overprovisioning_factor.value = cluster.overprovisioning_factor
    return out


def _lb_endpoint(endpoint: ir.Endpoint) -> endpoint_components_pb2.LbEndpoint:
    address = (
        address_pb2.Address(pipe=address_pb2.Pipe(path=endpoint.address))
        if endpoint.pipe
        else address_pb2.Address(
            socket_address=address_pb2.SocketAddress(
                address=endpoint.address, port_value=endpoint.port
            )
        )
    )
    out = endpoint_components_pb2.LbEndpoint(
        endpoint=endpoint_components_pb2.Endpoint(address=address, hostname=endpoint.hostname or "")
    )
    if endpoint.weight is not None:
        out.load_balancing_weight.CopyFrom(wrappers_pb2.UInt32Value(value=endpoint.weight))
    check = out.endpoint.health_check_config
    if endpoint.health_check_port is not None:
        check.port_value = endpoint.health_check_port
    if endpoint.health_check_hostname is not None:
        check.hostname = endpoint.health_check_hostname
    metadata = endpoint_metadata(endpoint.metadata)
    if metadata is not None:
        out.metadata.CopyFrom(metadata)
    if endpoint.sni:
        out.metadata.filter_metadata[TRANSPORT_SOCKET_MATCH].CopyFrom(
            _struct({SNI_MATCH: endpoint.sni})
        )
    return out
