"""`ir.BufferLimit` → Envoy's buffer filter. The listener's filter is off by default
(`disabled`): it buffers only where a virtual host, route or weighted destination gives a
limit (a per-filter config switches it on there), and `disabled: true` below a limit
switches it off again."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.extensions.filters.http.buffer.v3 import buffer_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import wrappers_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack
from gw.translator.envoy.traffic import used_anywhere

#: The listener-level limit Envoy requires; never used (the filter is off unless a
#: per-filter config with its own limit switches it on).
_PLACEHOLDER = buffer_pb2.Buffer(max_request_bytes=wrappers_pb2.UInt32Value(value=1 << 20))


def _buffer(traffic: ir.HostTraffic | ir.RouteTraffic | ir.DestinationTraffic) -> object:
    return traffic.buffer


class BufferFilter:
    name = names.BUFFER

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not used_anywhere(vhosts, _buffer):
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(_PLACEHOLDER), disabled=True)

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        limit = vhost.traffic.buffer if vhost.traffic is not None else None
        return None if limit is None else build_buffer_per_route(limit)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        limit = route.traffic.buffer if route.traffic is not None else None
        return None if limit is None else build_buffer_per_route(limit)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_buffer_per_route(limit: ir.BufferLimit) -> buffer_pb2.BufferPerRoute:
    if limit.disabled:
        return buffer_pb2.BufferPerRoute(disabled=True)
    assert limit.max_request_bytes is not None
    return buffer_pb2.BufferPerRoute(
        buffer=buffer_pb2.Buffer(
            max_request_bytes=wrappers_pb2.UInt32Value(value=limit.max_request_bytes)
        )
    )
