"""gRPC-Web → Envoy's grpc_web filter, which turns a browser's gRPC-Web request into gRPC for
the upstream and the answer back; other requests pass untouched. On every listener unless
its Gateway (or the Settings) switch it off — and only where it can work: gRPC needs
HTTP/2 to the upstream, so a listener whose routes reach no HTTP/2 upstream (`useHttp2`, or
the client's own protocol) does without the filter, which would cost every request there
CPU (`bench/dataplane_pieces.py`) and could only turn a gRPC-Web request into gRPC over
HTTP/1.1, which no upstream answers. There, gRPC-Web requests reach the upstream as sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from envoy.extensions.filters.http.grpc_web.v3 import grpc_web_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.hostfacts import ListenerFacts, host_facts
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


def http1_only(clusters: Sequence[ir.Cluster]) -> frozenset[str]:
    """The clusters known to speak HTTP/1.1 only."""
    return frozenset(c.name for c in clusters if not (c.http2 or c.use_downstream_protocol))


def with_grpc_web(listener: ir.Listener, reaches_http2: bool) -> ir.Listener:
    """`listener`, with gRPC-Web off when none of its routes reaches an HTTP/2 cluster."""
    if reaches_http2 or not listener.plugins.grpc_web:
        return listener
    plugins = dataclasses.replace(listener.plugins, grpc_web=False)
    return dataclasses.replace(listener, plugins=plugins)


def where_grpc_can_reach(listener: ir.Listener, clusters: Sequence[ir.Cluster]) -> ir.Listener:
    """`listener`, with gRPC-Web off unless one of its routes forwards to a cluster that can
    speak HTTP/2 (a cluster not among `clusters` counts as one: nothing is known of it; so
    does a cluster a request header names). The dynamic forward proxy's cluster speaks
    HTTP/1.1. Each HTTP part of a hybrid listener is a listener of its own here. (The
    builder keeps these facts per virtual host instead: `hostfacts.py`.)"""
    if listener.matched:
        parts = tuple(
            dataclasses.replace(p, http=where_grpc_can_reach(p.http, clusters)) if p.http else p
            for p in listener.matched
        )
        return dataclasses.replace(listener, matched=parts)
    if not listener.plugins.grpc_web:
        return listener
    facts = ListenerFacts.of(host_facts(v) for v in listener.virtual_hosts)
    return with_grpc_web(listener, facts.reaches_http2(http1_only(clusters)))
