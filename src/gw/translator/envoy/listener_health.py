"""`ir.HealthCheck` → Envoy's health check filter (not pass-through): requests for exactly the
path are answered by the proxy (200, or 503 while draining or failed), never forwarded."""

from __future__ import annotations

from collections.abc import Sequence

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.filters.http.health_check.v3 import health_check_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import string_pb2
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.listener_filter import ListenerOnly
from gw.translator.envoy.packing import pack


class ListenerHealthCheckFilter(ListenerOnly):
    name = names.HEALTH_CHECK

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        check = listener.plugins.health_check
        if check is None:
            return None
        config = health_check_pb2.HealthCheck(
            pass_through_mode=wrappers_pb2.BoolValue(value=False),
            headers=[
                rc_pb2.HeaderMatcher(
                    name=":path", string_match=string_pb2.StringMatcher(exact=check.path)
                )
            ],
        )
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))
