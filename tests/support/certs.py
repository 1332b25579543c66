"""Certificates made in the tests: a CA, and leaf certificates it signs."""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from gw import certgen


@dataclass(frozen=True)
class KeyPair:
    cert_pem: str
    key_pem: str
    cert: x509.Certificate
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem(cert: x509.Certificate, key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> KeyPair:
    pem = certgen.pem(cert, key)
    return KeyPair(cert_pem=pem.cert_pem, key_pem=pem.key_pem, cert=cert, key=key)


def make_ca(common_name: str = "gw test CA") -> KeyPair:
    """A CA as gw issues its own (gw.certgen), valid 30 days."""
    issued = certgen.issue_ca(common_name, datetime.timedelta(days=30))
    key = serialization.load_pem_private_key(issued.key_pem.encode(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return _pem(x509.load_pem_x509_certificate(issued.cert_pem.encode()), key)


def make_cert(
    hostnames: list[str],
    ca: KeyPair | None = None,
    *,
    days: float = 30,
    expired: bool = False,
) -> KeyPair:
    """A server certificate for `hostnames` (and 127.0.0.1), signed by `ca` or self-signed."""
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    start = now - datetime.timedelta(days=10 if expired else 1)
    end = now - datetime.timedelta(days=1) if expired else now + datetime.timedelta(days=days)
    names: list[x509.GeneralName] = [x509.DNSName(h) for h in hostnames]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    issuer_name = ca.cert.subject if ca else _name(hostnames[0])
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(hostnames[0]))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [x509.oid.ExtendedKeyUsageOID.SERVER_AUTH, x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .sign(ca.key if ca else key, hashes.SHA256())
    )
    return _pem(cert, key)


def tls_secret_yaml(name: str, namespace: str, pair: KeyPair, ca: KeyPair | None = None) -> str:
    """A `kubernetes.io/tls` Secret manifest holding `pair` (and `ca.crt` when given)."""

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    lines = [
        "apiVersion: v1",
        "kind: Secret",
        f"metadata: {{name: {name}, namespace: {namespace}}}",
        "type: kubernetes.io/tls",
        "data:",
        f"  tls.crt: {b64(pair.cert_pem)}",
        f"  tls.key: {b64(pair.key_pem)}",
    ]
    if ca is not None:
        lines.append(f"  ca.crt: {b64(ca.cert_pem)}")
    return "\n".join(lines) + "\n"
