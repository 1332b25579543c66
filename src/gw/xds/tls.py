"""Mutual TLS on xDS: the certificates the control plane serves with and its clients present.

Both sides read a folder laid out as a mounted `kubernetes.io/tls` Secret: `ca.crt` (the
CAs to trust, one or more), `tls.crt`, `tls.key`. Rotation needs no restart:

- the server reads the folder again on the first handshake after any of its files changed
  (a Secret update swaps them all at once); files that do not fit together (a key that is not
  the certificate's, a half-copied folder) are logged and the last good ones stay in use;
- a client reads it whenever it connects (the extauth and rate-limit servers reconnect with
  a fresh channel; Envoy watches the folder itself, see `gw.proxy.xds_tls`).

The client checks that the server's certificate names `gw.<namespace>.svc`, whatever
address it dials (a Unix socket, an IP, a DNS name): the control plane's certificate from
`gw certgen` does; a client certificate, which names roles only, cannot pose as the server.

Plaintext is for loopback: `plaintext_refusal` says why a non-loopback address may not serve
or dial xDS without TLS (unless `--insecure-xds`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import serialization

log = logging.getLogger(__name__)

CA_FILE = "ca.crt"
CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
#: The control plane's service: clients check its certificate names `gw.<namespace>.svc`.
SERVICE = "gw"


class XdsTlsError(Exception):
    """The certificate folder cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Material:
    ca: bytes
    cert: bytes
    key: bytes


@dataclass(frozen=True, slots=True)
class CertificateFolder:
    path: Path

    def files(self) -> tuple[Path, Path, Path]:
        return self.path / CA_FILE, self.path / CERT_FILE, self.path / KEY_FILE

    def version(self) -> tuple[tuple[int, int, int], ...]:
        """Changes whenever a file is replaced or rewritten (a Secret update swaps a
        symlink: `stat` follows it)."""
        out = []
        for file in self.files():
            try:
                stat = os.stat(file)
            except OSError:
                out.append((0, 0, 0))
            else:
                out.append((stat.st_ino, stat.st_mtime_ns, stat.st_size))
        return tuple(out)

    def read(self) -> Material:
        """The three files, checked: PEM certificates, and a key that is the certificate's."""
        ca_file, cert_file, key_file = self.files()
        try:
            material = Material(ca_file.read_bytes(), cert_file.read_bytes(), key_file.read_bytes())
        except OSError as exc:
            raise XdsTlsError(
                f"cannot read the xDS certificates in {self.path}: {exc.strerror}: "
                f"{exc.filename} (the folder holds {CA_FILE}, {CERT_FILE}, {KEY_FILE}; "
                "`gw certgen` makes them)"
            ) from None
        try:
            x509.load_pem_x509_certificates(material.ca)
        except ValueError:
            raise XdsTlsError(f"{ca_file} holds no PEM certificate") from None
        try:
            chain = x509.load_pem_x509_certificates(material.cert)
        except ValueError:
            raise XdsTlsError(f"{cert_file} holds no PEM certificate") from None
        try:
            key = serialization.load_pem_private_key(material.key, password=None)
        except (ValueError, TypeError):
            raise XdsTlsError(f"{key_file} holds no unencrypted PEM private key") from None
        if _public(key.public_key()) != _public(chain[0].public_key()):
            raise XdsTlsError(f"{key_file} is not the private key of {cert_file}")
        return material

    def certificate(self) -> x509.Certificate:
        """The certificate the folder holds now (for logs and checks)."""
        return x509.load_pem_x509_certificates(self.read().cert)[0]


def _public(key: object) -> bytes:
    return key.public_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


class ServerCertificates:
    """The control plane's certificate and the CAs its clients must be signed by, from
    `folder`; `credentials()` requires and verifies a client certificate on every handshake."""

    def __init__(self, folder: Path) -> None:
        self.folder = CertificateFolder(folder)
        self._version = self.folder.version()
        self._material = self.folder.read()  # XdsTlsError: refuse to start
        self._bad_version: tuple[tuple[int, int, int], ...] | None = None
        self.reloads = 0

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.dynamic_ssl_server_credentials(
            _configuration(self._material),
            self._fetch,
            require_client_authentication=True,
        )

    def _fetch(self) -> grpc.ServerCertificateConfiguration | None:
        """Called by gRPC before each handshake: new files when they changed, else None
        (keep the current ones)."""
        version = self.folder.version()
        if version == self._version or version == self._bad_version:
            return None
        try:
            material = self.folder.read()
        except XdsTlsError as exc:
            self._bad_version = version
            log.warning("xds: keeping the current certificates: %s", exc)
            return None
        self._version, self._material = version, material
        self.reloads += 1
        log.info("xds: certificates in %s changed: serving the new ones", self.folder.path)
        return _configuration(material)


def _configuration(material: Material) -> grpc.ServerCertificateConfiguration:
    return grpc.ssl_server_certificate_configuration([(material.key, material.cert)], material.ca)


def server_name(namespace: str) -> str:
    """The name the control plane's certificate must carry for clients of `namespace`."""
    return f"{SERVICE}.{namespace}.svc"


def namespace_of(role: str) -> str:
    return role.partition("~")[0]


def channel_credentials(folder: Path) -> grpc.ChannelCredentials:
    """A client's credentials, read from `folder` now (call again to pick up a rotation)."""
    material = CertificateFolder(folder).read()
    return grpc.ssl_channel_credentials(material.ca, material.key, material.cert)


def secure_channel(address: str, folder: Path, role: str) -> grpc.aio.Channel:
    """A channel to the control plane at `address` over mutual TLS, as `role`."""
    return grpc.aio.secure_channel(
        address,
        channel_credentials(folder),
        options=[("grpc.ssl_target_name_override", server_name(namespace_of(role)))],
    )


def is_loopback(address: str) -> bool:
    """`address` (`host:port`, `[v6]:port`, `unix:path`) stays on this machine."""
    if address.startswith("unix:"):
        return True
    host = address.rpartition(":")[0].strip("[]") if ":" in address else address
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plaintext_refusal(address: str, side: str) -> str | None:
    """Why plaintext xDS may not be used on `address` (None on loopback); `side` says who
    asks: `serve` (the control plane) or `dial` (a client)."""
    if is_loopback(address):
        return None
    if side == "serve":
        risk = (
            "whoever can reach it could pose as a proxy and receive every TLS private key "
            "and client secret"
        )
    else:
        risk = (
            "the configuration, private keys included, would cross the network unencrypted, "
            "from a server nobody verified"
        )
    return (
        f"refusing to {side} xDS in plaintext on {address}: {risk}. Use mutual TLS "
        "(--xds-certs DIR, made by `gw certgen`), keep xDS on loopback, or accept the risk "
        "with --insecure-xds"
    )
