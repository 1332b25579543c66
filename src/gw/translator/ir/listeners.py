"""A listener: an address and port, and the virtual hosts served on it."""

from __future__ import annotations

from dataclasses import dataclass

from gw.translator.ir.routeconfig import RouteConfigOptions
from gw.translator.ir.source import SourceRef
from gw.translator.ir.virtualhosts import VirtualHost


@dataclass(frozen=True, slots=True, kw_only=True)
class Listener:
    name: str
    address: str
    port: int
    virtual_hosts: tuple[VirtualHost, ...]
    #: The Gateway resource it comes from; None for the built-in gateways.
    gateway: SourceRef | None = None
    #: The Gateway's `routeOptions` for the route configurations of this listener.
    route_options: RouteConfigOptions | None = None

    @property
    def route_config_name(self) -> str:
        return f"{self.name}-routes"
