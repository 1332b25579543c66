"""Gateway (`gateway.vendor.io/v1`): one listener (address, port, plain or TLS) on one or
more proxies, and what it serves (REFERENCE.md §1.9): VirtualServices (`httpGateway`,
`api/http_gateway.py`), TCP hosts (`tcpGateway`, `api/tcp.py`), or both, told apart by a
matcher (`hybridGateway`, `api/hybrid.py`); with the listener `options`
(`api/listener_options.py`) and `routeOptions` (the route configuration's settings,
here).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from gw.api.http_gateway import HttpGateway, LabelExpressions
from gw.api.hybrid import HybridGateway
from gw.api.listener_options import ListenerOptions
from gw.api.meta import Model, Resource
from gw.api.tcp import TcpGateway

__all__ = ["DEFAULT_PROXY", "Gateway", "GatewaySpec", "HttpGateway", "LabelExpressions"]

#: The proxy a Gateway lands on when it names none (the deployment of SPEC.md).
DEFAULT_PROXY = "gateway-proxy"


class RouteConfigurationOptions(Model):
    """`routeOptions`: settings of the route configuration the listener is served."""

    max_direct_response_body_size_bytes: int | None = Field(default=None, ge=0)
    #: True: a route's header changes are applied after (so over) its virtual host's.
    most_specific_header_mutations_wins: bool | None = None


class GatewaySpec(Model):
    bind_address: str = "::"
    bind_port: int = Field(default=8080, ge=1, le=65535)
    ssl: bool = False
    proxy_names: list[str] = [DEFAULT_PROXY]
    use_proxy_proto: bool | None = None
    http_gateway: HttpGateway | None = None
    tcp_gateway: TcpGateway | None = None
    hybrid_gateway: HybridGateway | None = None
    options: ListenerOptions | None = None
    route_options: RouteConfigurationOptions | None = None


class Gateway(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "Gateway"
    PLURAL: ClassVar[str] = "gateways"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("gw",)

    spec: GatewaySpec = GatewaySpec()
