"""An Upstream's TLS (`spec.sslConfig`, `spec.static.useTls`) → `ir.UpstreamTls`.

Everything Envoy would refuse is a finding here instead, so that a misconfigured TLS section
rejects the Upstream (and, through the reference, every route to it) rather than making
Envoy NACK the clusters:

- `secretRef` must name a usable TLS secret (`secrets.resolve_tls_secret`): its `tls.crt`
  and `tls.key` become the client certificate (unless `oneWayTls`), its `ca.crt` verifies
  the upstream. A secret holding only `ca.crt` is enough for server verification;
- `sslFiles` are paths on the proxy host, read by Envoy (the control plane cannot see them);
- `verifySubjectAltName` needs a CA; versions and cipher names must be ones Envoy knows.

Without any CA the upstream's certificate is not verified, as in the established gateway.
A static upstream uses TLS without `sslConfig` when `useTls` is true, or when it is unset
and a host is on port 443. Its SNI is `sslConfig.sni`, else each host's own: its `sniAddr`,
else its host name (`autoSniRewrite`, on unless set to false).
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace

from gw import api
from gw.api.tls import SslParameters, UpstreamSslConfig
from gw.api.upstream import StaticHost, StaticSpec
from gw.translator import ir
from gw.translator.clock import Clock
from gw.translator.gateway.secrets import resolve_tls_secret
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

TLS_VERSIONS = ("TLS_AUTO", "TLSv1_0", "TLSv1_1", "TLSv1_2", "TLSv1_3")
#: Cipher suite names BoringSSL (Envoy's TLS library) accepts.
CIPHER_SUITES = frozenset(
    {
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-CHACHA20-POLY1305",
        "ECDHE-PSK-CHACHA20-POLY1305",
        "ECDHE-ECDSA-AES128-SHA",
        "ECDHE-RSA-AES128-SHA",
        "ECDHE-PSK-AES128-CBC-SHA",
        "ECDHE-ECDSA-AES256-SHA",
        "ECDHE-RSA-AES256-SHA",
        "ECDHE-PSK-AES256-CBC-SHA",
        "AES128-GCM-SHA256",
        "AES256-GCM-SHA384",
        "AES128-SHA",
        "AES256-SHA",
        "PSK-AES128-CBC-SHA",
        "PSK-AES256-CBC-SHA",
        "DES-CBC3-SHA",
    }
)
ECDH_CURVES = frozenset({"X25519", "P-256", "P-384", "P-521", "X25519MLKEM768"})


def build_upstream_tls(
    upstream: api.Upstream,
    *,
    refs: Refs,
    report: ResourceReport,
    clock: Clock,
) -> tuple[ir.UpstreamTls | None, tuple[ir.TlsSecret, ...]]:
    """The upstream's TLS and the secrets it needs; (None, ()) for plain text or errors."""
    spec = upstream.spec
    ssl = spec.ssl_config
    if ssl is None:
        if spec.static is not None and _static_wants_tls(spec.static):
            return ir.UpstreamTls(sni=_static_sni(spec.static)), ()
        return None, ()
    if spec.static is not None and spec.static.use_tls is False:
        report.warning(
            "spec.static.useTls", "useTls: false is ignored: sslConfig makes the upstream use TLS"
        )
    sni = ssl.sni or (_static_sni(spec.static) if spec.static is not None else None)
    return build_ssl_config(
        ssl, sni, "spec.sslConfig", referrer=upstream.key, refs=refs, report=report, clock=clock
    )


def build_ssl_config(
    ssl: UpstreamSslConfig,
    sni: str | None,
    field: str,
    *,
    referrer: api.ResourceKey,
    refs: Refs,
    report: ResourceReport,
    clock: Clock,
) -> tuple[ir.UpstreamTls | None, tuple[ir.TlsSecret, ...]]:
    """An `UpstreamSslConfig` at `field` of `referrer` (an Upstream's, or a Gateway's for
    its dynamically forwarded hosts), with this SNI."""
    errors = len(report.errors)
    if ssl.sds is not None:
        report.error(
            f"{field}.sds",
            "sds is not supported in gw: it needs a separate SDS server; gw sends key material "
            "over its own xDS stream: use secretRef",
        )
    tls = ir.UpstreamTls(
        sni=sni,
        verify_subject_alt_names=tuple(ssl.verify_subject_alt_name),
        alpn_protocols=tuple(ssl.alpn_protocols),
        allow_renegotiation=ssl.allow_renegotiation,
    )
    if ssl.parameters is not None:
        tls = _with_parameters(tls, ssl.parameters, f"{field}.parameters", report)
    secret: ir.TlsSecret | None = None
    if ssl.secret_ref is not None and ssl.ssl_files is not None:
        report.error(field, "set one of secretRef and sslFiles, not both")
    elif ssl.secret_ref is not None:
        secret = resolve_tls_secret(
            ssl.secret_ref,
            refs=refs,
            referrer=referrer,
            field=f"{field}.secretRef",
            report=report,
            clock=clock,
            require_key=False,
        )
        if secret is not None:
            tls = _with_secret(tls, secret, one_way=bool(ssl.one_way_tls))
    elif ssl.ssl_files is not None:
        tls = _with_files(tls, ssl, f"{field}.sslFiles", report)
    unresolved = ssl.secret_ref is not None and secret is None  # already reported
    if tls.verify_subject_alt_names and not (tls.ca_secret or tls.ca_file or unresolved):
        report.error(
            f"{field}.verifySubjectAltName",
            "a root_ca must be provided if verify_subject_alt_name is not empty: add ca.crt "
            "to the secret or set sslFiles.rootCa",
        )
    if len(report.errors) > errors:
        return None, ()
    return tls, (secret,) if secret is not None else ()


def _with_secret(tls: ir.UpstreamTls, secret: ir.TlsSecret, *, one_way: bool) -> ir.UpstreamTls:
    return replace(
        tls,
        certificate_secret=secret.name if secret.certificate_chain and not one_way else None,
        ca_secret=secret.name if secret.ca else None,
    )


def _with_files(
    tls: ir.UpstreamTls, ssl: UpstreamSslConfig, field: str, report: ResourceReport
) -> ir.UpstreamTls:
    files = ssl.ssl_files
    assert files is not None
    if bool(files.tls_cert) != bool(files.tls_key):
        report.error(field, "both or none of cert chain and private key must be provided")
    if files.ocsp_staple:
        report.warning(
            f"{field}.ocspStaple", "OCSP stapling applies to TLS termination only; ignored"
        )
    present = files.tls_cert and files.tls_key and not ssl.one_way_tls
    return replace(
        tls,
        certificate_file=files.tls_cert if present else None,
        private_key_file=files.tls_key if present else None,
        ca_file=files.root_ca or None,
    )


def _with_parameters(
    tls: ir.UpstreamTls, parameters: SslParameters, field: str, report: ResourceReport
) -> ir.UpstreamTls:
    low, high = parameters.minimum_protocol_version, parameters.maximum_protocol_version
    if low and high and "TLS_AUTO" not in (low, high):
        if TLS_VERSIONS.index(low) > TLS_VERSIONS.index(high):
            report.error(
                f"{field}.minimumProtocolVersion",
                f"the minimum version {low} is above the maximum version {high}",
            )
    for i, suite in enumerate(parameters.cipher_suites):
        unknown = [n for n in suite.strip("[]").split("|") if n not in CIPHER_SUITES]
        if unknown:
            known = ", ".join(sorted(CIPHER_SUITES))
            report.error(
                f"{field}.cipherSuites[{i}]",
                f"unknown cipher suite {', '.join(unknown)}; known: {known}",
            )
    for i, curve in enumerate(parameters.ecdh_curves):
        if curve not in ECDH_CURVES:
            report.error(
                f"{field}.ecdhCurves[{i}]",
                f"unknown curve {curve}; known: {', '.join(sorted(ECDH_CURVES))}",
            )
    return replace(
        tls,
        min_version=low,
        max_version=high,
        cipher_suites=tuple(parameters.cipher_suites),
        ecdh_curves=tuple(parameters.ecdh_curves),
    )


def _static_wants_tls(static: StaticSpec) -> bool:
    if static.use_tls is not None:
        return static.use_tls
    return any(host.port == 443 for host in static.hosts)


def _static_sni(static: StaticSpec) -> str | None:
    """The first host's SNI (`host_sni`)."""
    return host_sni(static, static.hosts[0]) if static.hosts else None


def host_sni(static: StaticSpec, host: StaticHost) -> str | None:
    """A static host's own SNI: its `sniAddr`, else (unless `autoSniRewrite: false`) its
    address when that is a host name."""
    if host.sni_addr:
        return host.sni_addr
    if static.auto_sni_rewrite is False:
        return None
    addr = host.addr.strip()
    try:
        ipaddress.ip_address(addr)
    except ValueError:
        return addr or None
    return None
