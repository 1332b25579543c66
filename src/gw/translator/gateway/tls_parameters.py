"""`sslConfig.parameters`: TLS versions, cipher suites and ECDH curves, checked against what
the proxy's BoringSSL accepts, so that a typo is a status and never a refused listener."""

from __future__ import annotations

from gw.api.tls import SslParameters
from gw.translator.reports import ResourceReport

_VERSIONS = ("TLSv1_0", "TLSv1_1", "TLSv1_2", "TLSv1_3")
#: TLS 1.0–1.2 cipher names the proxy's BoringSSL accepts (checked with Envoy 1.40); TLS 1.3
#: suites are not configurable. `[a|b]` groups of these are accepted too.
CIPHER_SUITES = frozenset(
    """
    ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-RSA-AES128-GCM-SHA256
    ECDHE-ECDSA-AES256-GCM-SHA384 ECDHE-RSA-AES256-GCM-SHA384
    ECDHE-ECDSA-CHACHA20-POLY1305 ECDHE-RSA-CHACHA20-POLY1305
    ECDHE-PSK-CHACHA20-POLY1305 ECDHE-ECDSA-AES128-SHA256 ECDHE-RSA-AES128-SHA256
    ECDHE-ECDSA-AES128-SHA ECDHE-RSA-AES128-SHA ECDHE-PSK-AES128-CBC-SHA
    ECDHE-ECDSA-AES256-SHA ECDHE-RSA-AES256-SHA ECDHE-PSK-AES256-CBC-SHA
    AES128-GCM-SHA256 AES256-GCM-SHA384 AES128-SHA PSK-AES128-CBC-SHA AES256-SHA
    PSK-AES256-CBC-SHA DES-CBC3-SHA
    """.split()
)
#: ECDH curve names BoringSSL accepts → the curve they mean (a curve may appear only once).
ECDH_CURVES = {
    "X25519": "X25519",
    "X25519MLKEM768": "X25519MLKEM768",
    "P-256": "P-256",
    "P-384": "P-384",
    "P-521": "P-521",
    "prime256v1": "P-256",
    "secp384r1": "P-384",
    "secp521r1": "P-521",
}


Parameters = tuple[str | None, str | None, tuple[str, ...], tuple[str, ...]]


def check_parameters(
    params: SslParameters | None, report: ResourceReport, field: str = "spec.sslConfig.parameters"
) -> Parameters | None:
    """(minimum version, maximum version, cipher suites, curves), or None after reporting."""
    if params is None:
        return None, None, (), ()
    ok = True
    minimum = _version(params.minimum_protocol_version)
    maximum = _version(params.maximum_protocol_version)
    if minimum and maximum and _VERSIONS.index(minimum) > _VERSIONS.index(maximum):
        report.error(
            f"{field}.minimumProtocolVersion",
            f"the minimum protocol version {minimum} is above the maximum {maximum}",
        )
        ok = False
    for i, suite in enumerate(params.cipher_suites):
        if not all(c in CIPHER_SUITES for c in suite.strip("[]").split("|")):
            report.error(
                f"{field}.cipherSuites[{i}]",
                f"unknown cipher suite {suite!r}; use names such as "
                "ECDHE-ECDSA-AES128-GCM-SHA256 (TLS 1.3 suites are not configurable)",
            )
            ok = False
    seen: set[str] = set()
    for i, curve in enumerate(params.ecdh_curves):
        if curve not in ECDH_CURVES or ECDH_CURVES[curve] in seen:
            problem = (
                f"names {ECDH_CURVES[curve]}, which is already listed"
                if curve in ECDH_CURVES
                else "is an unknown ECDH curve"
            )
            report.error(
                f"{field}.ecdhCurves[{i}]",
                f"{curve!r} {problem}; list each curve once, from "
                f"[{' '.join(sorted(ECDH_CURVES))}]",
            )
            ok = False
        else:
            seen.add(ECDH_CURVES[curve])
    if not ok:
        return None
    return minimum, maximum, tuple(params.cipher_suites), tuple(params.ecdh_curves)


def _version(version: str | None) -> str | None:
    return None if version in (None, "TLS_AUTO") else version
