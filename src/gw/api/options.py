"""VirtualHostOption and RouteOption (`gateway.vendor.io/v1`): options kept in their own
resource and shared through `optionsConfigRefs.delegateOptions`."""

from __future__ import annotations

from typing import ClassVar

from gw.api.meta import Model, Resource
from gw.api.virtualservice import RouteOptions, VirtualHostOptions


class VirtualHostOptionSpec(Model):
    options: VirtualHostOptions = VirtualHostOptions()


class RouteOptionSpec(Model):
    options: RouteOptions = RouteOptions()


class VirtualHostOption(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "VirtualHostOption"
    PLURAL: ClassVar[str] = "virtualhostoptions"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("vhopts",)

    spec: VirtualHostOptionSpec


class RouteOption(Resource):
    API_VERSION: ClassVar[str] = "gateway.vendor.io/v1"
    KIND: ClassVar[str] = "RouteOption"
    PLURAL: ClassVar[str] = "routeoptions"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("rtopts",)

    spec: RouteOptionSpec
