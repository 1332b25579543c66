"""RouteTable (`gateway.vendor.io/v1`): routes that a VirtualService or another RouteTable
delegates a path prefix to (`delegateAction`)."""

from __future__ import annotations

from typing import ClassVar

from gw.api.meta import Model, Resource
from gw.api.virtualservice import Route


class RouteTableSpec(Model):
    routes: list[Route] = []
    #: Order among the tables one selector picks: ascending weight.
    weight: int = 0


class RouteTable(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "RouteTable"
    PLURAL: ClassVar[str] = "routetables"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("rt",)

    spec: RouteTableSpec
