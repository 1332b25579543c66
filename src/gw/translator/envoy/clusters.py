"""IR clusters → Envoy clusters and, for EDS clusters, their load assignments.

An EDS cluster's message holds nothing about its endpoints, so that an endpoint change
changes only its ClusterLoadAssignment. TLS to the upstream is an `UpstreamTlsContext`
transport socket whose key material comes over SDS by name (`secrets.py`).
"""

from __future__ import annotations

import ipaddress

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, base_pb2, protocol_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2
from envoy.extensions.transport_sockets.tls.v3 import common_pb2, secret_pb2, tls_pb2
from envoy.extensions.upstreams.http.v3 import http_protocol_options_pb2 as http_options_pb2
from envoy.type.matcher.v3 import string_pb2
from google.protobuf import duration_pb2, wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack
from gw.translator.envoy.secrets import validation_context_name

_HTTP_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"


def build_cluster(cluster: ir.Cluster) -> cluster_pb2.Cluster:
    out = cluster_pb2.Cluster(
        name=cluster.name,
        connect_timeout=_duration_ms(cluster.connect_timeout_ms),
    )
    if cluster.discovery == "eds":
        out.type = cluster_pb2.Cluster.EDS
        out.eds_cluster_config.eds_config.CopyFrom(names.ads_config_source())
    else:
        out.type = (
            cluster_pb2.Cluster.STATIC
            if cluster.discovery == "static"
            else (cluster_pb2.Cluster.STRICT_DNS)
        )
        if cluster.discovery == "dns":
            out.dns_lookup_family = cluster_pb2.Cluster.V4_PREFERRED
        out.load_assignment.CopyFrom(build_load_assignment(cluster))
    if cluster.http2:
        options = http_options_pb2.HttpProtocolOptions(
            explicit_http_config=http_options_pb2.HttpProtocolOptions.ExplicitHttpConfig(
                http2_protocol_options=protocol_pb2.Http2ProtocolOptions()
            )
        )
        out.typed_extension_protocol_options[_HTTP_OPTIONS].CopyFrom(pack(options))
    if cluster.tls is not None:
        out.transport_socket.CopyFrom(
            base_pb2.TransportSocket(
                name=names.TLS_TRANSPORT_SOCKET, typed_config=pack(build_upstream_tls(cluster.tls))
            )
        )
    return out


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
    lb_endpoints = []
    for endpoint in cluster.endpoints:
        lb = endpoint_components_pb2.LbEndpoint(
            endpoint=endpoint_components_pb2.Endpoint(
                address=address_pb2.Address(
                    socket_address=address_pb2.SocketAddress(
                        address=endpoint.address, port_value=endpoint.port
                    )
                )
            )
        )
        if endpoint.weight is not None:
            lb.load_balancing_weight.CopyFrom(wrappers_pb2.UInt32Value(value=endpoint.weight))
        lb_endpoints.append(lb)
    localities = (
        [endpoint_components_pb2.LocalityLbEndpoints(lb_endpoints=lb_endpoints)]
        if lb_endpoints
        else []
    )
    return endpoint_pb2.ClusterLoadAssignment(cluster_name=cluster.name, endpoints=localities)


def _duration_ms(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)
