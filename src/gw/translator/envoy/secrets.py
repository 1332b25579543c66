"""IR TLS secrets → Envoy SDS `Secret` resources (served on the ADS stream).

A secret with a certificate becomes `<name>` (`tls_certificate`); one with a CA also becomes
`<name>-ca` (`validation_context`). Listeners and clusters refer to them by these names, so
rotating a secret is an SDS update only: no listener drain, no cluster churn.
"""

from __future__ import annotations

from envoy.config.core.v3 import base_pb2
from envoy.extensions.transport_sockets.tls.v3 import common_pb2, secret_pb2

from gw.translator import ir


def validation_context_name(secret_name: str) -> str:
    return f"{secret_name}-ca"


def build_secrets(secret: ir.TlsSecret) -> list[secret_pb2.Secret]:
    out = []
    if secret.certificate_chain:
        out.append(
            secret_pb2.Secret(
                name=secret.name,
                tls_certificate=common_pb2.TlsCertificate(
                    certificate_chain=base_pb2.DataSource(inline_string=secret.certificate_chain),
                    private_key=base_pb2.DataSource(inline_string=secret.private_key),
                ),
            )
        )
    if secret.ca:
        out.append(
            secret_pb2.Secret(
                name=validation_context_name(secret.name),
                validation_context=common_pb2.CertificateValidationContext(
                    trusted_ca=base_pb2.DataSource(inline_string=secret.ca)
                ),
            )
        )
    return out
