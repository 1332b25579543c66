"""`hybridGateway` (the established `HybridGateway`): one listener whose connections are
told apart by a matcher — the client's source address, the TLS SNI name — and each handed
to an HTTP or a TCP gateway.

The parts are written inline (`matchedGateways`) or selected from MatchableHttpGateway and
MatchableTcpGateway resources (`delegatedHttpGateways`, `delegatedTcpGateways`; only when
there are no `matchedGateways`).
"""

from __future__ import annotations

from gw.api.delegation import SelectorExpression
from gw.api.hcm import CidrRange, HttpConnectionManagerSettings
from gw.api.http_gateway import HttpGateway
from gw.api.meta import Model, ResourceRef
from gw.api.tcp import TcpGateway
from gw.api.tls import SslConfig


class Matcher(Model):
    """Which connections a matched gateway takes: from these source ranges, with these
    SNI names (`sslConfig`), both when both are set; empty: every other connection."""

    ssl_config: SslConfig | None = None
    source_prefix_ranges: list[CidrRange] = []
    passthrough_cipher_suites: list[str] = []


class MatchedGateway(Model):
    matcher: Matcher | None = None
    http_gateway: HttpGateway | None = None
    tcp_gateway: TcpGateway | None = None


class GatewaySelector(Model):
    """Empty `namespaces`: every namespace (the established rule for gateway selection)."""

    namespaces: list[str] = []
    labels: dict[str, str] = {}
    expressions: list[SelectorExpression] = []


class DelegatedHttpGateway(Model):
    ref: ResourceRef | None = None
    selector: GatewaySelector | None = None
    #: The fields set here win over the selected gateways' own.
    prevent_child_overrides: bool = False
    #: Defaults for the selected gateways' `httpGateway.options.httpConnectionManagerSettings`.
    http_connection_manager_settings: HttpConnectionManagerSettings | None = None
    #: Defaults for the selected gateways' `matcher.sslConfig`; set, it selects only TLS ones.
    ssl_config: SslConfig | None = None


class DelegatedTcpGateway(Model):
    ref: ResourceRef | None = None
    selector: GatewaySelector | None = None


class HybridGateway(Model):
    matched_gateways: list[MatchedGateway] | None = None
    delegated_http_gateways: DelegatedHttpGateway | None = None
    delegated_tcp_gateways: DelegatedTcpGateway | None = None
