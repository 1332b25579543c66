"""Certificates gw issues itself: a private CA and what it signs.

Two users: the validation webhook's serving certificate (`gw.orch.webhook`), and mutual TLS
on xDS (`gw certgen`), whose set is:

- the CA, kept (its key too) to sign the next certificates: a rotation re-issues every
  certificate under the same CA, so old and new ones are trusted alike while they spread;
  `rotate_ca` makes a new CA, and the previous one stays trusted until it expires;
- `controlplane`: the xDS server's certificate, for the `gw` service's DNS names;
- one client certificate per party, naming the role it may take as a URI SAN
  (`urn:gw:role:<namespace>~<name>`, see `gw.xds.identity`): `extauth`, `ratelimit`, and each
  proxy (`gateway-proxy` unless told otherwise).

Every party gets `ca.crt` (the trusted CAs), `tls.crt` and `tls.key`: the keys of a
`kubernetes.io/tls` Secret, and the files of a folder (`write_folder`).
"""

from __future__ import annotations

import datetime
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gw import defaults
from gw.xds.identity import COMPONENTS, role_uri
from gw.xds.tls import CA_FILE, CERT_FILE, KEY_FILE, SERVICE

CA_VALIDITY = datetime.timedelta(days=3650)
CERT_VALIDITY = datetime.timedelta(days=365)
#: The party whose certificate serves xDS (the `gw` deployment).
CONTROLPLANE = "controlplane"
#: Where the CA lives among the parties' folders (`ca/ca.crt`, `ca/ca.key`).
CA_PARTY = "ca"
CA_KEY_FILE = "ca.key"
#: The CA a rotation replaced, trusted until it expires.
PREVIOUS_CA_FILE = "previous-ca.crt"
#: Names a proxy may not have: they are the other parties'.
RESERVED = frozenset({CA_PARTY, CONTROLPLANE, *COMPONENTS})


@dataclass(frozen=True, slots=True)
class KeyPair:
    cert_pem: str
    key_pem: str


def pem(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> KeyPair:
    """A certificate and its key as PEM (the key PKCS #8, unencrypted)."""
    return KeyPair(
        cert_pem=cert.public_bytes(serialization.Encoding.PEM).decode(),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode(),
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def issue_ca(common_name: str, validity: datetime.timedelta = CA_VALIDITY) -> KeyPair:
    now = datetime.datetime.now(datetime.UTC)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
        .sign(key, hashes.SHA256())
    )
    return pem(cert, key)


def issue(
    ca: KeyPair,
    common_name: str,
    *,
    dns_names: Sequence[str] = (),
    uris: Sequence[str] = (),
    server: bool,
    validity: datetime.timedelta = CERT_VALIDITY,
) -> KeyPair:
    """A certificate `ca` signs: for a server (`dns_names`) or for a client (`uris`)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_cert = x509.load_pem_x509_certificate(ca.cert_pem.encode())
    ca_key = serialization.load_pem_private_key(ca.key_pem.encode(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey), "gw's CAs have EC keys"
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    names += [x509.UniformResourceIdentifier(u) for u in uris]
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(min(now + validity, ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    )
    if names:  # an empty subjectAltName is invalid (RFC 5280), and cryptography 51 refuses it
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return pem(builder.sign(ca_key, hashes.SHA256()), key)


def service_names(service: str, namespace: str) -> list[str]:
    """The DNS names of a Kubernetes service, shortest first."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def expires(cert_pem: str) -> datetime.datetime:
    return x509.load_pem_x509_certificate(cert_pem.encode()).not_valid_after_utc


# --- the xDS set ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Authority:
    """The xDS CA and the one it replaced (trusted while it is valid)."""

    ca: KeyPair
    previous_cert_pem: str = ""

    def trusted(self, now: datetime.datetime) -> str:
        """The CA bundle every party trusts: the CA, and the previous one until it expires."""
        if self.previous_cert_pem and expires(self.previous_cert_pem) > now:
            return self.ca.cert_pem + self.previous_cert_pem
        return self.ca.cert_pem


@dataclass(frozen=True, slots=True)
class Party:
    """What one party of xDS gets: its certificate and key, and the CAs to trust."""

    name: str
    cert: KeyPair
    ca_pem: str


def parties(namespace: str, proxies: Sequence[str]) -> list[str]:
    """Every party of an install: the control plane, the components, the proxies."""
    clash = sorted(set(proxies) & RESERVED)
    if clash:
        raise ValueError(f"proxy names {', '.join(clash)} are taken by gw's own parties")
    return [CONTROLPLANE, *COMPONENTS, *dict.fromkeys(proxies)]


def renew_authority(
    current: Authority | None,
    namespace: str,
    *,
    rotate_ca: bool = False,
    validity: datetime.timedelta = CERT_VALIDITY,
) -> Authority:
    """The CA to sign with: the current one, or a new one when there is none, when asked
    (`rotate_ca`), or when it would expire before a certificate issued now."""
    now = datetime.datetime.now(datetime.UTC)
    if current is not None and not rotate_ca and expires(current.ca.cert_pem) > now + validity:
        return current
    ca = issue_ca(f"gw xDS CA {namespace}")
    return Authority(ca, current.ca.cert_pem if current is not None else "")


def issue_parties(
    authority: Authority,
    namespace: str,
    proxies: Sequence[str] = (defaults.PROXY_NAME,),
    validity: datetime.timedelta = CERT_VALIDITY,
) -> list[Party]:
    """New certificates for every party, signed by `authority`'s CA."""
    trusted = authority.trusted(datetime.datetime.now(datetime.UTC))
    out = []
    for name in parties(namespace, proxies):
        if name == CONTROLPLANE:
            cert = issue(
                authority.ca,
                server_common_name(namespace),
                dns_names=service_names(SERVICE, namespace),
                server=True,
                validity=validity,
            )
        else:
            role = defaults.role(name, namespace)
            cert = issue(authority.ca, role, uris=[role_uri(role)], server=False, validity=validity)
        out.append(Party(name, cert, trusted))
    return out


def server_common_name(namespace: str) -> str:
    return f"{SERVICE}.{namespace}.svc"


# --- folders ----------------------------------------------------------------------------------


def read_authority(folder: Path) -> Authority | None:
    """The CA kept in `folder/ca/`, if any."""
    where = folder / CA_PARTY
    try:
        ca = KeyPair((where / CA_FILE).read_text(), (where / CA_KEY_FILE).read_text())
    except FileNotFoundError:
        return None
    previous = where / PREVIOUS_CA_FILE
    return Authority(ca, previous.read_text() if previous.exists() else "")


def write_folder(folder: Path, authority: Authority, issued: Sequence[Party]) -> list[Path]:
    """`folder/ca/` (the CA and its key) and `folder/<party>/` (`ca.crt`, `tls.crt`,
    `tls.key`) for each party, keys readable by the owner only. Returns the folders written.

    Each folder's files change all at once, as the orchestrator updates a mounted Secret: they
    are links into `..data`, a link to a hidden folder of the current files, which a rename
    replaces; nobody reading the folder ever sees a certificate with another one's key."""
    files = {
        CA_PARTY: {
            CA_FILE: authority.ca.cert_pem,
            CA_KEY_FILE: authority.ca.key_pem,
            PREVIOUS_CA_FILE: authority.previous_cert_pem,
        }
    }
    for party in issued:
        files[party.name] = {
            CA_FILE: party.ca_pem,
            CERT_FILE: party.cert.cert_pem,
            KEY_FILE: party.cert.key_pem,
        }
    written = []
    for name, contents in files.items():
        _swap_in(folder / name, {f: text for f, text in contents.items() if text})
        written.append(folder / name)
    return written


DATA_LINK = "..data"


def _swap_in(where: Path, contents: dict[str, str]) -> None:
    where.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix="..", dir=where))
    for file, text in contents.items():
        private = file in (KEY_FILE, CA_KEY_FILE)
        fd = os.open(
            fresh / file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o644
        )
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
    fresh.chmod(0o755)
    link = where / DATA_LINK
    old = link.resolve() if link.is_symlink() else None
    temp = where / f"{DATA_LINK}_tmp"
    temp.unlink(missing_ok=True)
    temp.symlink_to(fresh.name)
    temp.replace(link)  # the switch: one rename
    for file in contents:
        entry = where / file
        if not entry.is_symlink():
            entry.unlink(missing_ok=True)
            entry.symlink_to(f"{DATA_LINK}/{file}")
    if old is not None and old != fresh:
        shutil.rmtree(old, ignore_errors=True)


def issue_folder(
    folder: Path,
    namespace: str,
    proxies: Sequence[str] = (defaults.PROXY_NAME,),
    *,
    rotate_ca: bool = False,
    validity: datetime.timedelta = CERT_VALIDITY,
) -> list[Path]:
    """`gw certgen --out FOLDER`: issue every party's certificate into `folder`, under the
    CA kept there (made when missing); returns the folders written."""
    current = read_authority(folder)
    authority = renew_authority(current, namespace, rotate_ca=rotate_ca, validity=validity)
    return write_folder(folder, authority, issue_parties(authority, namespace, proxies, validity))
