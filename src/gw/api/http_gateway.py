"""`httpGateway` (the established `HttpGateway`): which VirtualServices a listener — or one
matched part of a hybrid listener — serves, and how it speaks HTTP (`options`). Used by the
Gateway, by `hybridGateway.matchedGateways[]` and by MatchableHttpGateway.
"""

from __future__ import annotations

from gw.api.delegation import SelectorExpression
from gw.api.http_listener_options import HttpListenerOptions
from gw.api.meta import Model, ResourceRef


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
