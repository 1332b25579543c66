"""TLS termination on the HTTPS listener: one filter chain per TLS virtual host.

`tls_inspector` reads the SNI from the ClientHello; each chain matches its virtual host's
`server_names` (a chain without names is the default, for any other SNI or none). With no
default chain, Envoy resets a connection whose SNI no chain claims: no certificate is shown
to a client that asked for a name gw does not serve.

Each chain has its own HTTP connection manager and route configuration holding only its
virtual host, so a virtual host is reachable only through its own SNI (a client cannot send
SNI `a.example.com` and `Host: b.example.com` to reach b with a's certificate).
Certificates come over SDS on the ADS stream: rotating a secret changes the `Secret`
resource only, never the listener, so nothing drains.
"""

from __future__ import annotations

from envoy.config.core.v3 import base_pb2
from envoy.config.listener.v3 import listener_components_pb2 as lc_pb2
from envoy.extensions.filters.listener.tls_inspector.v3 import tls_inspector_pb2
from envoy.extensions.transport_sockets.tls.v3 import common_pb2, secret_pb2, tls_pb2
from envoy.type.matcher.v3 import string_pb2
from google.protobuf import duration_pb2, wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack
from gw.translator.envoy.secrets import validation_context_name

_SAN_TYPES = (
    common_pb2.SubjectAltNameMatcher.DNS,
    common_pb2.SubjectAltNameMatcher.URI,
    common_pb2.SubjectAltNameMatcher.EMAIL,
)


def is_tls(listener: ir.Listener) -> bool:
    """A listener whose virtual hosts terminate TLS (stage 1 never mixes plain ones in)."""
    tls = [v.tls is not None for v in listener.virtual_hosts]
    if any(tls) and not all(tls):
        raise ValueError(f"listener {listener.name} mixes TLS and plain virtual hosts")
    return any(tls)


def route_config_name(listener: ir.Listener, vhost: ir.VirtualHost) -> str:
    """The route configuration of one TLS virtual host's filter chain."""
    return f"{listener.name}-{vhost.name}-routes"


def tls_inspector() -> lc_pb2.ListenerFilter:
    return lc_pb2.ListenerFilter(
        name=names.TLS_INSPECTOR, typed_config=pack(tls_inspector_pb2.TlsInspector())
    )


def filter_chain(vhost: ir.VirtualHost, manager: lc_pb2.Filter) -> lc_pb2.FilterChain:
    """The chain serving `vhost`: matched by SNI, TLS from SDS, then `manager`."""
    tls = vhost.tls
    assert tls is not None
    chain = lc_pb2.FilterChain(
        name=vhost.name,
        filters=[manager],
        transport_socket=base_pb2.TransportSocket(
            name=names.TLS_TRANSPORT_SOCKET, typed_config=pack(downstream_tls_context(tls))
        ),
    )
    if tls.server_names:
        chain.filter_chain_match.server_names.extend(tls.server_names)
    if tls.handshake_timeout_ms is not None:
        chain.transport_socket_connect_timeout.CopyFrom(
            duration_pb2.Duration(
                seconds=tls.handshake_timeout_ms // 1000,
                nanos=(tls.handshake_timeout_ms % 1000) * 1_000_000,
            )
        )
    return chain


def downstream_tls_context(tls: ir.TlsTermination) -> tls_pb2.DownstreamTlsContext:
    common = tls_pb2.CommonTlsContext(
        tls_certificate_sds_secret_configs=[_sds(tls.secret)],
        alpn_protocols=list(tls.alpn_protocols),
    )
    params = _tls_params(tls)
    if params is not None:
        common.tls_params.CopyFrom(params)
    if tls.validate_clients:
        validation = _sds(validation_context_name(tls.secret))
        if tls.verify_subject_alt_names:
            common.combined_validation_context.CopyFrom(
                tls_pb2.CommonTlsContext.CombinedCertificateValidationContext(
                    default_validation_context=common_pb2.CertificateValidationContext(
                        match_typed_subject_alt_names=[
                            common_pb2.SubjectAltNameMatcher(
                                san_type=san_type, matcher=string_pb2.StringMatcher(exact=name)
                            )
                            for name in tls.verify_subject_alt_names
                            for san_type in _SAN_TYPES
                        ]
                    ),
                    validation_context_sds_secret_config=validation,
                )
            )
        else:
            common.validation_context_sds_secret_config.CopyFrom(validation)
    context = tls_pb2.DownstreamTlsContext(common_tls_context=common)
    if tls.validate_clients or tls.require_client_certificate:
        # Always explicit: Envoy's implicit default for validated clients is deprecated.
        context.require_client_certificate.CopyFrom(
            wrappers_pb2.BoolValue(value=tls.require_client_certificate)
        )
    if tls.disable_session_resumption:
        context.disable_stateless_session_resumption = True
        context.disable_stateful_session_resumption = True
    return context


def _tls_params(tls: ir.TlsTermination) -> common_pb2.TlsParameters | None:
    if not (tls.minimum_version or tls.maximum_version or tls.cipher_suites or tls.ecdh_curves):
        return None
    params = common_pb2.TlsParameters(
        cipher_suites=list(tls.cipher_suites), ecdh_curves=list(tls.ecdh_curves)
    )
    if tls.minimum_version:
        params.tls_minimum_protocol_version = common_pb2.TlsParameters.TlsProtocol.Value(
            tls.minimum_version
        )
    if tls.maximum_version:
        params.tls_maximum_protocol_version = common_pb2.TlsParameters.TlsProtocol.Value(
            tls.maximum_version
        )
    return params


def _sds(name: str) -> secret_pb2.SdsSecretConfig:
    return secret_pb2.SdsSecretConfig(name=name, sds_config=names.ads_config_source())
