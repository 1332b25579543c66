"""TLS secrets → checked key material (`ir.TlsSecret`), for downstream and upstream TLS;
and the lookup every other secret reference (cloud credentials and keys) makes.

A TLS secret is the orchestrator's `kubernetes.io/tls` shape: `tls.crt` (certificate chain,
PEM), `tls.key` (private key, PEM), optionally `ca.crt`. It is checked here so that a bad
one is a status on the resource that uses it, never a configuration Envoy refuses: the PEM
must parse, the key must match the certificate, and an expired certificate is reported
(as a warning: it still serves, as the established gateway does).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.secret import TLS_TYPE
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

CERT_KEY = "tls.crt"
KEY_KEY = "tls.key"
CA_KEY = "ca.crt"


def tls_secret_name(namespace: str, name: str) -> str:
    """The SDS name of a secret: `<namespace>_<name>`."""
    return f"{namespace}_{name}"


def resolve_secret(
    ref: ResourceRef,
    referrer: ResourceKey,
    field: str,
    refs: Refs,
    report: ResourceReport | None,
    *,
    missing: str,
) -> tuple[api.Secret | None, ResourceKey]:
    """The secret `ref` names (None when it cannot be used) and its key. One that does not
    exist is reported (`missing`, with `{where}` for its `namespace.name`) when `report` is
    given; one that exists but does not parse is reported by the store."""
    secret = refs.resolve(api.Secret, ref, referrer=referrer, field=field)
    key = refs.key(api.Secret, ref, referrer)
    if secret is None and report is not None and not refs.exists(key):
        report.error(field, missing.format(where=f"{key.namespace}.{key.name}"))
    return secret, key


def resolve_tls_secret(
    ref: ResourceRef,
    *,
    refs: Refs,
    referrer: ResourceKey,
    field: str,
    report: ResourceReport,
    clock: Clock,
    require_key: bool = True,
) -> ir.TlsSecret | None:
    """The checked TLS material `ref` points at, or None after reporting why not.

    `require_key=False` accepts a secret that holds only `ca.crt` (upstream TLS that only
    verifies the server).
    """
    secret = refs.resolve(api.Secret, ref, referrer=referrer, field=field)
    key = refs.key(api.Secret, ref, referrer)
    where = f"{key.namespace}.{key.name}"
    if secret is None:
        report.error(field, f"SSL secret not found: list did not find secret {where}")
        return None
    if secret.type not in (TLS_TYPE, "Opaque") or (
        secret.value(CERT_KEY) is None and secret.value(CA_KEY) is None
    ):
        report.error(field, f"{where} is not a TLS secret: it needs {CERT_KEY} and {KEY_KEY}")
        return None
    return check_tls_material(
        secret, where=where, field=field, report=report, clock=clock, require_key=require_key
    )


def check_tls_material(
    secret: api.Secret,
    *,
    where: str,
    field: str,
    report: ResourceReport,
    clock: Clock,
    require_key: bool,
) -> ir.TlsSecret | None:
    cert_pem = secret.value(CERT_KEY) or ""
    key_pem = secret.value(KEY_KEY) or ""
    ca_pem = secret.value(CA_KEY)
    meta = secret.metadata
    source = ir.SourceRef(kind=api.Secret.KIND, namespace=meta.namespace, name=meta.name)
    if ca_pem is not None and not _parse_certificates(ca_pem, f"{where} {CA_KEY}", field, report):
        return None
    if not cert_pem and not key_pem and not require_key and ca_pem is not None:
        return ir.TlsSecret(
            name=tls_secret_name(meta.namespace, meta.name),
            source=source,
            certificate_chain="",
            private_key="",
            ca=ca_pem,
        )
    if bool(cert_pem) != bool(key_pem):
        report.error(
            field,
            f"{where} is not a valid TLS secret: both or none of cert chain and "
            "private key must be provided",
        )
        return None
    pair = check_key_pair(cert_pem, key_pem)
    if pair.problem == "certificate":
        report.error(field, _no_certificate(f"{where} {CERT_KEY}", pair.detail))
        return None
    if pair.problem == "key":
        report.error(
            field,
            f"{where} is not a valid TLS secret: {KEY_KEY} is not a PEM "
            f"private key without a passphrase ({pair.detail})",
        )
        return None
    if pair.problem == "mismatch" or pair.not_after is None:
        report.error(
            field,
            f"{where} is not a valid TLS secret: the private key does not match the certificate",
        )
        return None
    not_after = pair.not_after.timestamp()
    if clock.passed(not_after):
        report.warning(
            field,
            f"the certificate in {where} expired on {pair.not_after:%Y-%m-%d %H:%M:%S} UTC",
        )
    return ir.TlsSecret(
        name=tls_secret_name(meta.namespace, meta.name),
        source=source,
        certificate_chain=cert_pem,
        private_key=key_pem,
        ca=ca_pem,
        not_after=not_after,
    )


@dataclass(frozen=True, slots=True)
class PairCheck:
    """What a certificate chain and a private key (PEM) are, whichever secret holds them:
    the first problem found (None: none; `detail` says why), and when the leaf
    certificate expires."""

    problem: Literal["certificate", "key", "mismatch"] | None = None
    detail: str = ""
    not_after: datetime | None = None


#: Key pairs already checked, by a digest of their text (the cache keeps no key
#: material), the most recently used last. Loading an RSA private key costs about 30 ms
#: (the library checks the key), and every TLS VirtualService that names a shared secret
#: checked it again: 200 of them on one RSA wildcard certificate took 5.9 s to translate.
_CHECKED: OrderedDict[bytes, PairCheck] = OrderedDict()
#: At most this many pairs are kept (a pair is a few hundred bytes).
CHECKED_PAIRS = 1024
_CHECKED_LOCK = threading.Lock()


def check_key_pair(cert_pem: str, key_pem: str) -> PairCheck:
    """`_check_key_pair`, once per distinct pair of texts (a pure function of them)."""
    cert, key = cert_pem.encode(), key_pem.encode()
    digest = hashlib.sha256(len(cert).to_bytes(8, "big") + cert + key).digest()
    with _CHECKED_LOCK:
        found = _CHECKED.get(digest)
        if found is not None:
            _CHECKED.move_to_end(digest)
            return found
    found = _check_key_pair(cert, key)  # outside the lock: it may take milliseconds
    with _CHECKED_LOCK:
        _CHECKED[digest] = found
        while len(_CHECKED) > CHECKED_PAIRS:
            _CHECKED.popitem(last=False)
    return found


def _check_key_pair(cert: bytes, key: bytes) -> PairCheck:
    try:
        chain = x509.load_pem_x509_certificates(cert)
    except ValueError as exc:
        return PairCheck("certificate", _short(exc))
    try:
        private_key = serialization.load_pem_private_key(key, password=None)
    except (ValueError, TypeError) as exc:
        return PairCheck("key", _short(exc))
    public = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    leaf = chain[0]
    if private_key.public_key().public_bytes(*public) != leaf.public_key().public_bytes(*public):
        return PairCheck("mismatch")
    return PairCheck(not_after=leaf.not_valid_after_utc)


def _parse_certificates(
    pem: str, what: str, field: str, report: ResourceReport
) -> list[x509.Certificate]:
    try:
        certificates = x509.load_pem_x509_certificates(pem.encode())
    except ValueError as exc:
        report.error(field, _no_certificate(what, _short(exc)))
        return []
    return certificates


def _no_certificate(what: str, detail: str) -> str:
    """The message for certificates that do not parse (`what`: the secret and its key)."""
    return (
        f"{what} is not a valid TLS secret: tls: failed to find any PEM data "
        f"in certificate input ({detail})"
    )


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    # cryptography appends a link to its FAQ, which tells a gw user nothing.
    return text.split(" See https://", 1)[0][:120]
