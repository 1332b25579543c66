"""UpstreamGroup (`gw.vendor.io/v1`): weighted destinations that routes share by name
(`routeAction.upstreamGroup`)."""

from __future__ import annotations

from typing import ClassVar

from gw.api.meta import Model, Resource
from gw.api.virtualservice import WeightedDestination


class UpstreamGroupSpec(Model):
    destinations: list[WeightedDestination] = []


class UpstreamGroup(Resource):
    API_VERSION: ClassVar[str] = "gw.vendor.io/v1"
    KIND: ClassVar[str] = "UpstreamGroup"
    PLURAL: ClassVar[str] = "upstreamgroups"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("ug",)

    spec: UpstreamGroupSpec
