"""TLS: how the HTTPS listener terminates it for a virtual host, and how Envoy speaks it to
an upstream. Key material is named (a `TlsSecret` of `Proxy.secrets`), never copied here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsTermination:
    """How the HTTPS listener terminates TLS for one virtual host (its own filter chain).

    `server_names` are the SNI names that select it (`*.example.com` allowed); empty means
    the default chain, for clients whose SNI matches no other chain or who send none.
    `secret` names the `TlsSecret` in `Proxy.secrets` (served over SDS, so rotating it needs
    no listener change); with `validate_clients` its CA checks client certificates, which
    `require_client_certificate` makes mandatory. Protocol versions are spelled as Envoy
    spells them (`TLSv1_2`).
    """

    server_names: tuple[str, ...]
    secret: str
    validate_clients: bool = False
    require_client_certificate: bool = False
    verify_subject_alt_names: tuple[str, ...] = ()
    alpn_protocols: tuple[str, ...] = ("h2", "http/1.1")
    minimum_version: str | None = None
    maximum_version: str | None = None
    cipher_suites: tuple[str, ...] = ()
    ecdh_curves: tuple[str, ...] = ()
    disable_session_resumption: bool = False
    handshake_timeout_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpstreamTls:
    """TLS from Envoy to an upstream. Key material is named, never copied here: `*_secret`
    is a `TlsSecret` of `Proxy.secrets` (served over SDS), `*_file` a path on the proxy."""

    sni: str | None = None
    #: Present this secret's certificate to the upstream (mutual TLS).
    certificate_secret: str | None = None
    #: Verify the upstream's certificate with this secret's CA.
    ca_secret: str | None = None
    certificate_file: str | None = None
    private_key_file: str | None = None
    ca_file: str | None = None
    verify_subject_alt_names: tuple[str, ...] = ()
    alpn_protocols: tuple[str, ...] = ()
    min_version: str | None = None
    max_version: str | None = None
    cipher_suites: tuple[str, ...] = ()
    ecdh_curves: tuple[str, ...] = ()
    allow_renegotiation: bool = False
