"""Envoy's side of mutual TLS on xDS: the `xds_cluster`'s transport socket.

Envoy reads its client certificate and the CAs to trust through SDS from local files (two
small JSON files the supervisor writes next to the bootstrap), which name the certificate
folder's files and watch the folder: when the folder's files are swapped (a mounted Secret
updated by the orchestrator, or `gw certgen --out` run again), Envoy loads the new ones for
its next connection, without a restart. The server's certificate must name
`gw.<namespace>.svc` (checked as a DNS SAN; also sent as SNI).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from envoy.config.core.v3 import base_pb2, config_source_pb2
from envoy.extensions.transport_sockets.tls.v3 import common_pb2, secret_pb2, tls_pb2
from envoy.type.matcher.v3 import string_pb2
from google.protobuf import any_pb2, json_format

from gw.xds.tls import CA_FILE, CERT_FILE, KEY_FILE

CERTIFICATE = "xds_client_certificate"
TRUSTED_CA = "xds_trusted_ca"


@dataclass(frozen=True, slots=True)
class XdsTls:
    """`certs`: the folder of `ca.crt`, `tls.crt`, `tls.key`; `sds_dir`: where the SDS files
    are written (writable); `server_name`: the name the control plane's certificate carries."""

    certs: Path
    sds_dir: Path
    server_name: str

    def sds_file(self, secret: str) -> Path:
        return self.sds_dir / f"{secret}.json"


def xds_transport_socket(tls: XdsTls) -> base_pb2.TransportSocket:
    context = tls_pb2.UpstreamTlsContext(
        sni=tls.server_name,
        common_tls_context=tls_pb2.CommonTlsContext(
            alpn_protocols=["h2"],
            tls_params=common_pb2.TlsParameters(
                tls_maximum_protocol_version=common_pb2.TlsParameters.TLSv1_3
            ),
            tls_certificate_sds_secret_configs=[_sds(tls, CERTIFICATE)],
            combined_validation_context=tls_pb2.CommonTlsContext.CombinedCertificateValidationContext(
                default_validation_context=common_pb2.CertificateValidationContext(
                    match_typed_subject_alt_names=[
                        common_pb2.SubjectAltNameMatcher(
                            san_type=common_pb2.SubjectAltNameMatcher.DNS,
                            matcher=string_pb2.StringMatcher(exact=tls.server_name),
                        )
                    ]
                ),
                validation_context_sds_secret_config=_sds(tls, TRUSTED_CA),
            ),
        ),
    )
    packed = any_pb2.Any()
    packed.Pack(context)
    return base_pb2.TransportSocket(name="envoy.transport_sockets.tls", typed_config=packed)


def _sds(tls: XdsTls, secret: str) -> secret_pb2.SdsSecretConfig:
    return secret_pb2.SdsSecretConfig(
        name=secret,
        sds_config=config_source_pb2.ConfigSource(
            path_config_source=config_source_pb2.PathConfigSource(
                path=str(tls.sds_file(secret)),
                watched_directory=base_pb2.WatchedDirectory(path=str(tls.certs)),
            ),
            resource_api_version=config_source_pb2.V3,
        ),
    )


def write_sds_files(tls: XdsTls) -> None:
    """The two SDS files the transport socket reads: the certificate and the trusted CAs,
    as file names in the certificate folder, which Envoy watches."""
    watched = base_pb2.WatchedDirectory(path=str(tls.certs))
    secrets = {
        CERTIFICATE: secret_pb2.Secret(
            name=CERTIFICATE,
            tls_certificate=common_pb2.TlsCertificate(
                certificate_chain=base_pb2.DataSource(filename=str(tls.certs / CERT_FILE)),
                private_key=base_pb2.DataSource(filename=str(tls.certs / KEY_FILE)),
                watched_directory=watched,
            ),
        ),
        TRUSTED_CA: secret_pb2.Secret(
            name=TRUSTED_CA,
            validation_context=common_pb2.CertificateValidationContext(
                trusted_ca=base_pb2.DataSource(filename=str(tls.certs / CA_FILE)),
                watched_directory=watched,
            ),
        ),
    }
    tls.sds_dir.mkdir(parents=True, exist_ok=True)
    for name, secret in secrets.items():
        packed = any_pb2.Any()
        packed.Pack(secret)
        body = {"resources": [json_format.MessageToDict(packed)]}
        temp = tls.sds_file(name).with_suffix(".tmp")
        temp.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
        temp.replace(tls.sds_file(name))
