"""Upstream TLS in stage 2: what the UpstreamTlsContext holds for each source of keys.

The golden cases cover secrets; certificate files appear only here, because the golden
xDS is checked by a real Envoy, which reads the files and there are none to read."""

from __future__ import annotations

from envoy.extensions.transport_sockets.tls.v3 import common_pb2, tls_pb2

from gw.translator import ir
from gw.translator.envoy.clusters import build_cluster


def cluster(tls: ir.UpstreamTls) -> tls_pb2.UpstreamTlsContext:
    built = build_cluster(
        ir.Cluster(
            name="u_default",
            source=ir.SourceRef(kind="Upstream", namespace="default", name="u"),
            discovery="static",
            endpoints=(ir.Endpoint(address="10.0.0.1", port=443),),
            tls=tls,
        )
    )
    assert built.transport_socket.name == "envoy.transport_sockets.tls"
    context = tls_pb2.UpstreamTlsContext()
    assert built.transport_socket.typed_config.Unpack(context)
    return context


def test_certificate_files_and_ca_file_with_names() -> None:
    context = cluster(
        ir.UpstreamTls(
            sni="api.example.org",
            certificate_file="/etc/gw/client.crt",
            private_key_file="/etc/gw/client.key",
            ca_file="/etc/gw/ca.crt",
            verify_subject_alt_names=("api.example.org", "10.0.0.1"),
        )
    )
    common = context.common_tls_context
    assert context.sni == "api.example.org"
    assert [
        (c.certificate_chain.filename, c.private_key.filename) for c in common.tls_certificates
    ] == [("/etc/gw/client.crt", "/etc/gw/client.key")]
    assert common.validation_context.trusted_ca.filename == "/etc/gw/ca.crt"
    sans = common.validation_context.match_typed_subject_alt_names
    assert [(s.san_type, s.matcher.exact) for s in sans] == [
        (common_pb2.SubjectAltNameMatcher.DNS, "api.example.org"),
        (common_pb2.SubjectAltNameMatcher.IP_ADDRESS, "10.0.0.1"),
    ]
    assert not common.tls_certificate_sds_secret_configs
    assert not common.HasField("validation_context_sds_secret_config")


def test_secrets_come_over_sds_by_name() -> None:
    common = cluster(
        ir.UpstreamTls(certificate_secret="default_client", ca_secret="default_client")
    ).common_tls_context
    assert [c.name for c in common.tls_certificate_sds_secret_configs] == ["default_client"]
    assert common.validation_context_sds_secret_config.name == "default_client-ca"
    assert common.validation_context_sds_secret_config.sds_config.HasField("ads")


def test_no_key_material_means_no_verification() -> None:
    context = cluster(ir.UpstreamTls(sni="public.example.org"))
    assert context.sni == "public.example.org"
    common = context.common_tls_context
    assert not common.tls_certificates and not common.tls_certificate_sds_secret_configs
    assert not common.HasField("validation_context")
    assert not common.HasField("combined_validation_context")
