"""Gateway (`gateway.vendor.io/v1`): one listener (address, port, plain or TLS) on one or
more proxies, and what it serves (REFERENCE.md §1.9): VirtualServices (`httpGateway`,
`api/http_gateway.py`), TCP hosts (`tcpGateway`, `api/tcp.py`), or both, told apart by a
matcher (`hybridGateway`, `api/hybrid.py`); with the listener `options`
(`api/listener_options.py`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from gw.api.http_gateway import HttpGateway, LabelExpressions
from gw.api.hybrid import HybridGateway
from gw.api.listener_options import ListenerOptions
from gw.api.meta import Model, Resource
from gw.api.tcp import TcpGateway

__all__ = ["DEFAULT_PROXY", "Gateway", "GatewaySpec", "HttpGateway", "LabelExpressions"]

#: The proxy a Gateway lands on when it names none (the deployment of SPEC.md).
DEFAULT_PROXY = "gateway-proxy"


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
    route_options: dict[str, Any] | None = None


class Gateway(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "Gateway"
    PLURAL: ClassVar[str] = "gateways"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("gw",)

    spec: GatewaySpec = GatewaySpec()
