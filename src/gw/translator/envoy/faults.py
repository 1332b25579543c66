"""`ir.Faults` → Envoy's fault filter: on a listener whose routes inject faults, with an
empty config there (no fault anywhere else), and each route's abort and delay as its
per-route config."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.extensions.filters.common.fault.v3 import fault_pb2 as common_fault_pb2
from envoy.extensions.filters.http.fault.v3 import fault_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.matching import fractional_percent, milliseconds
from gw.translator.envoy.packing import pack


def _faults(route: ir.Route) -> ir.Faults | None:
    return route.traffic.faults if route.traffic is not None else None


class FaultFilter:
    name = names.FAULT

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not any(_faults(r) is not None for v in vhosts for r in v.routes):
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(fault_pb2.HTTPFault()))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        faults = _faults(route)
        return None if faults is None else build_fault(faults)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_fault(faults: ir.Faults) -> fault_pb2.HTTPFault:
    out = fault_pb2.HTTPFault()
    if faults.abort is not None:
        out.abort.http_status = faults.abort.status
        out.abort.percentage.CopyFrom(fractional_percent(faults.abort.share))
    if faults.delay is not None:
        out.delay.CopyFrom(
            common_fault_pb2.FaultDelay(
                fixed_delay=milliseconds(faults.delay.delay_ms),
                percentage=fractional_percent(faults.delay.share),
            )
        )
    return out
