"""The matcher of a hybrid gateway's part (`matchedGateways[].matcher`, or a Matchable*
Gateway's `matcher`) → which connections the part takes, and the TLS defaults it gives.

- `sourcePrefixRanges`: clients from these CIDR ranges (written as Envoy matches them: the
  address masked to its prefix). Envoy prefers the most specific range, and SNI names over
  source ranges.
- `sslConfig` on a TCP part: its `sniDomains` are the SNI names of the hosts that name none
  (and must include the names of those that do); TLS is terminated or passed through per
  host, so its other fields cannot apply and are refused.
- `sslConfig` on an HTTP part: present, the part serves the VirtualServices with
  `sslConfig`, each terminating TLS with its own secret; its fields are defaults for what
  a VirtualService's own `sslConfig` leaves unset (`TlsDefaults`). A secret, subject
  names to verify and OCSP stapling are each VirtualService's own, and refused here.
- `passthroughCipherSuites` needs a listener filter stock Envoy does not have: refused.
"""

from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass

from gw.api.hcm import CidrRange
from gw.api.tls import SslConfig
from gw.translator import ir
from gw.translator.gateway.hcm import checked_ms
from gw.translator.gateway.tcp import refuse_tls_fields
from gw.translator.gateway.tls import DEFAULT_ALPN, NO_ALPN, sni_names
from gw.translator.gateway.tls_parameters import check_parameters
from gw.translator.reports import ResourceReport

#: Why a TCP matcher's TLS settings cannot apply.
TCP_MATCHER = (
    "on the matcher of a tcpGateway, which only chooses by sniDomains: set TLS on each "
    "tcpHost's sslConfig"
)
#: `sslConfig` fields a VirtualService must set itself (with why), on an HTTP matcher.
_HTTP_REFUSED = (
    ("secretRef", "each VirtualService served here terminates TLS with its own secretRef"),
    ("sslFiles", "each VirtualService served here terminates TLS with its own secretRef"),
    ("verifySubjectAltName", "set it on the VirtualServices, whose secrets hold the CA"),
    ("ocspStaplePolicy", "gw serves no OCSP staples"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TlsDefaults:
    """What an HTTP matcher's `sslConfig` gives the TLS of the VirtualServices it serves,
    where their own `sslConfig` leaves a field unset (None: no default)."""

    server_names: tuple[str, ...] = ()
    alpn_protocols: tuple[str, ...] | None = None
    parameters: tuple[str | None, str | None, tuple[str, ...], tuple[str, ...]] | None = None
    one_way_tls: bool | None = None
    disable_session_resumption: bool | None = None
    handshake_timeout_ms: int | None = None

    def apply(self, tls: ir.TlsTermination, own: SslConfig | None) -> ir.TlsTermination:
        """`tls` (built from `own`) with these defaults where `own` sets nothing."""
        own = own or SslConfig()
        out = tls
        if self.server_names and not own.sni_domains:
            out = dataclasses.replace(out, server_names=self.server_names)
        if self.alpn_protocols is not None and not own.alpn_protocols:
            out = dataclasses.replace(out, alpn_protocols=self.alpn_protocols)
        if self.parameters is not None and own.parameters is None:
            minimum, maximum, ciphers, curves = self.parameters
            out = dataclasses.replace(
                out,
                minimum_version=minimum,
                maximum_version=maximum,
                cipher_suites=ciphers,
                ecdh_curves=curves,
            )
        if self.one_way_tls is not None and own.one_way_tls is None:
            required = out.validate_clients and not self.one_way_tls
            out = dataclasses.replace(out, require_client_certificate=required)
        if (
            self.disable_session_resumption is not None
            and own.disable_tls_session_resumption is None
        ):
            out = dataclasses.replace(
                out, disable_session_resumption=self.disable_session_resumption
            )
        if self.handshake_timeout_ms is not None and own.transport_socket_connect_timeout is None:
            out = dataclasses.replace(out, handshake_timeout_ms=self.handshake_timeout_ms)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Matched:
    """A matcher as built: the chain match, its SNI names, and (HTTP) the TLS defaults;
    `tls` is set exactly when the matcher has an `sslConfig`."""

    match: ir.ChainMatch
    server_names: tuple[str, ...] = ()
    tls: TlsDefaults | None = None

    @property
    def key(self) -> tuple[object, ...]:
        """Two parts with equal keys would take the same connections."""
        return (self.match.source_ranges, self.server_names, self.tls is not None)


def build_matcher(
    ranges: list[CidrRange],
    ssl: SslConfig | None,
    ciphers: list[str],
    *,
    tcp: bool,
    field: str,
    report: ResourceReport,
) -> Matched | None:
    """The matcher at `field`, or None after reporting errors."""
    errors = len(report.errors)
    if ciphers:
        report.error(
            f"{field}.passthroughCipherSuites",
            "passthroughCipherSuites is not supported: choosing a filter chain by the "
            "client's cipher suites needs a listener filter stock Envoy does not have",
        )
    match = ir.ChainMatch(
        source_ranges=source_ranges(ranges, f"{field}.sourcePrefixRanges", report)
    )
    names: tuple[str, ...] = ()
    tls = None
    if ssl is not None:
        where = f"{field}.sslConfig"
        names = sni_names(ssl.sni_domains, f"{where}.sniDomains", report)
        if tcp:
            refuse_tls_fields(ssl, where, report, TCP_MATCHER)
        else:
            tls = tls_defaults(ssl, names, where, report)
        tls = tls or TlsDefaults(server_names=names)
    if len(report.errors) > errors:
        return None
    return Matched(match=match, server_names=names, tls=tls)


def source_ranges(
    ranges: list[CidrRange], field: str, report: ResourceReport
) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for i, cidr in enumerate(ranges):
        length = cidr.prefix_len or 0
        try:
            network = ipaddress.ip_network(f"{cidr.address_prefix}/{length}", strict=False)
        except ValueError as exc:
            report.error(f"{field}[{i}]", f"not a CIDR range: {exc}")
            continue
        value = (str(network.network_address), network.prefixlen)
        if value not in out:
            out.append(value)
    return tuple(sorted(out))


def tls_defaults(
    ssl: SslConfig, names: tuple[str, ...], field: str, report: ResourceReport
) -> TlsDefaults | None:
    """An HTTP matcher's `sslConfig` as defaults for its VirtualServices' TLS."""
    errors = len(report.errors)
    data = ssl.model_dump(by_alias=True, exclude_defaults=True)
    for name, why in _HTTP_REFUSED:
        if name in data and not (name == "ocspStaplePolicy" and data[name] == "LENIENT_STAPLING"):
            report.error(
                f"{field}.{name}",
                f"{name} is not supported on a matcher of an httpGateway: {why}",
            )
    for i, protocol in enumerate(ssl.alpn_protocols):
        if not 0 < len(protocol.encode()) < 256:
            report.error(f"{field}.alpnProtocols[{i}]", "an ALPN protocol name has 1 to 255 bytes")
    timeout = ssl.transport_socket_connect_timeout
    timeout_ms = (
        checked_ms(timeout, f"{field}.transportSocketConnectTimeout", report) if timeout else None
    )
    parameters = None
    if ssl.parameters is not None:
        parameters = check_parameters(ssl.parameters, report, f"{field}.parameters")
    if len(report.errors) > errors:
        return None
    alpn = None
    if ssl.alpn_protocols:
        alpn = () if ssl.alpn_protocols == [NO_ALPN] else tuple(ssl.alpn_protocols)
    return TlsDefaults(
        server_names=names,
        alpn_protocols=alpn if alpn != DEFAULT_ALPN else None,
        parameters=parameters,
        one_way_tls=ssl.one_way_tls,
        disable_session_resumption=ssl.disable_tls_session_resumption,
        handshake_timeout_ms=timeout_ms,
    )
