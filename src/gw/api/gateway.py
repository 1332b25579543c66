"""Gateway (`gateway.vendor.io/v1`): one listener (address, port, plain or TLS) on one or
more proxies, and which VirtualServices it serves (REFERENCE.md §1.9).

Only `httpGateway` is built, with the listener `options` (`api/listener_options.py`) and
`httpGateway.options` (`api/http_listener_options.py`) and `routeOptions` (the route
configuration's settings, here). `tcpGateway` and `hybridGateway` are
accepted by the parser (so an established manifest loads and gets a status naming the
field) and refused by the translator: a listener gw cannot build must not be served
half-built.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from gw.api.delegation import SelectorExpression
from gw.api.http_listener_options import HttpListenerOptions
from gw.api.listener_options import ListenerOptions
from gw.api.meta import Model, Resource, ResourceRef

#: The proxy a Gateway lands on when it names none (the deployment of SPEC.md).
DEFAULT_PROXY = "gateway-proxy"


class LabelExpressions(Model):
    """Label expressions, with RouteTable selectors' operators (`gw.api.delegation`)."""

    expressions: list[SelectorExpression] = []


class HttpGateway(Model):
    """Which VirtualServices the listener serves. Priority when several are set:
    `virtualServiceExpressions` > `virtualServiceSelector` > `virtualServices`; none set:
    every VirtualService (of `virtualServiceNamespaces`, `*` or empty meaning all)."""

    virtual_services: list[ResourceRef] = []
    virtual_service_selector: dict[str, str] = {}
    virtual_service_expressions: LabelExpressions | None = None
    virtual_service_namespaces: list[str] = []
    options: HttpListenerOptions | None = None


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
    # Parsed, then refused by the translator with a status naming the field (not built).
    tcp_gateway: dict[str, Any] | None = None
    hybrid_gateway: dict[str, Any] | None = None
    options: ListenerOptions | None = None
    route_options: RouteConfigurationOptions | None = None


class Gateway(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "Gateway"
    PLURAL: ClassVar[str] = "gateways"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("gw",)

    spec: GatewaySpec = GatewaySpec()
