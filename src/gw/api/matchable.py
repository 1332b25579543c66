"""MatchableHttpGateway and MatchableTcpGateway (`gateway.vendor.io/v1`): one matched part
of a hybrid listener, kept in a resource of its own so that another team can own it; a
Gateway's `hybridGateway.delegatedHttpGateways` / `delegatedTcpGateways` select them by
reference or by labels.
"""

from __future__ import annotations

from typing import ClassVar

from gw.api.hcm import CidrRange
from gw.api.http_gateway import HttpGateway
from gw.api.meta import Model, Resource
from gw.api.tcp import TcpGateway
from gw.api.tls import SslConfig


class HttpMatcher(Model):
    source_prefix_ranges: list[CidrRange] = []
    ssl_config: SslConfig | None = None


class MatchableHttpGatewaySpec(Model):
    matcher: HttpMatcher | None = None
    http_gateway: HttpGateway | None = None


class MatchableHttpGateway(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "MatchableHttpGateway"
    PLURAL: ClassVar[str] = "httpgateways"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("hgw",)

    spec: MatchableHttpGatewaySpec = MatchableHttpGatewaySpec()


class TcpMatcher(Model):
    source_prefix_ranges: list[CidrRange] = []
    ssl_config: SslConfig | None = None
    passthrough_cipher_suites: list[str] = []


class MatchableTcpGatewaySpec(Model):
    matcher: TcpMatcher | None = None
    tcp_gateway: TcpGateway | None = None


class MatchableTcpGateway(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "MatchableTcpGateway"
    PLURAL: ClassVar[str] = "tcpgateways"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("tgw",)

    spec: MatchableTcpGatewaySpec = MatchableTcpGatewaySpec()
