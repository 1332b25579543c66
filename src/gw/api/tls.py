"""`sslConfig`: downstream TLS on a VirtualService, upstream TLS on an Upstream."""

from __future__ import annotations

from typing import Any, Literal

from gw.api.meta import Model, ResourceRef

TlsVersion = Literal["TLS_AUTO", "TLSv1_0", "TLSv1_1", "TLSv1_2", "TLSv1_3"]


class SslFiles(Model):
    tls_cert: str | None = None
    tls_key: str | None = None
    root_ca: str | None = None
    ocsp_staple: str | None = None


class SslParameters(Model):
    minimum_protocol_version: TlsVersion | None = None
    maximum_protocol_version: TlsVersion | None = None
    cipher_suites: list[str] = []
    ecdh_curves: list[str] = []


class SslConfig(Model):
    """Downstream TLS of a VirtualService: served on the HTTPS listener, chosen by SNI."""

    secret_ref: ResourceRef | None = None
    ssl_files: SslFiles | None = None
    sni_domains: list[str] = []
    verify_subject_alt_name: list[str] = []
    parameters: SslParameters | None = None
    alpn_protocols: list[str] = []
    one_way_tls: bool | None = None
    disable_tls_session_resumption: bool | None = None
    transport_socket_connect_timeout: str | None = None
    ocsp_staple_policy: Literal["LENIENT_STAPLING", "STRICT_STAPLING", "MUST_STAPLE"] | None = None


class UpstreamSslConfig(Model):
    """TLS origination from Envoy to an Upstream."""

    secret_ref: ResourceRef | None = None
    ssl_files: SslFiles | None = None
    sni: str | None = None
    verify_subject_alt_name: list[str] = []
    parameters: SslParameters | None = None
    alpn_protocols: list[str] = []
    allow_renegotiation: bool = False
    one_way_tls: bool | None = None
    #: A separate SDS server: refused with the reason (`upstream_tls.py`).
    sds: dict[str, Any] | None = None
