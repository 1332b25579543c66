"""gRPC-Web → Envoy's grpc_web filter, which turns a browser's gRPC-Web request into gRPC for
the upstream and the answer back; other requests pass untouched. On every listener unless
its Gateway (or the Settings) switch it off."""

from __future__ import annotations

from collections.abc import Sequence

from envoy.extensions.filters.http.grpc_web.v3 import grpc_web_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.listener_filter import ListenerOnly
from gw.translator.envoy.packing import pack


class GrpcWebFilter(ListenerOnly):
    name = names.GRPC_WEB

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        if not listener.plugins.grpc_web:
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(grpc_web_pb2.GrpcWeb()))
