"""Filters that a listener's own options (`ir.Listener.plugins`, a Gateway's
`httpGateway.options`) configure, besides its virtual hosts.

`ListenerConfigured` is what `listeners.http_filters` asks such a filter for, instead of
`HttpFilter.listener_filter`; `ListenerOnly` is the base of the filters nothing but the
listener's options puts on the chain (they have nothing per virtual host or route).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf.message import Message

from gw.translator import ir


@runtime_checkable
class ListenerConfigured(Protocol):
    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        """The filter for this listener's chain (serving `vhosts`), or None."""
        ...


class ListenerOnly:
    """A filter only the listener's options put on its chain."""

    name: str
    configures_routes = False

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        return None

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        return None

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()
