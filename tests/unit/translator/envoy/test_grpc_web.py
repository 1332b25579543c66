"""gRPC-Web goes only on listeners where it can work: some route reaches an HTTP/2 upstream."""

from __future__ import annotations

import dataclasses

from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.translator import ir
from gw.translator.envoy import build_xds, names

SOURCE = ir.SourceRef(kind="Upstream", namespace="default", name="x")


def _cluster(name: str, **protocol: bool) -> ir.Cluster:
    return ir.Cluster(name=name, source=SOURCE, discovery="static", endpoints=(), **protocol)


def _listener(*clusters: str, grpc_web: bool = True) -> ir.Listener:
    routes = tuple(
        ir.Route(
            name=f"r{i}",
            match=ir.RouteMatch(path_kind="prefix", path="/"),
            action=ir.Forward(clusters=(ir.WeightedCluster(cluster=c),)),
        )
        for i, c in enumerate(clusters)
    )
    vhost = ir.VirtualHost(name="default_app", source=SOURCE, domains=("*",), routes=routes)
    return ir.Listener(
        name="listener-::-8080",
        address="::",
        port=8080,
        virtual_hosts=(vhost,),
        plugins=ir.HttpListenerOptions(grpc_web=grpc_web),
    )


def _filters(listener: ir.Listener, clusters: list[ir.Cluster]) -> list[str]:
    proxy = ir.Proxy(
        name="gateway-proxy", namespace="gw-system", listeners=(listener,), clusters=tuple(clusters)
    )
    built = build_xds(proxy).of(names.LISTENER)[listener.name]
    hcm = hcm_pb2.HttpConnectionManager()
    built.filter_chains[0].filters[0].typed_config.Unpack(hcm)
    return [f.name for f in hcm.http_filters]


GRPC_WEB = "envoy.filters.http.grpc_web"


def test_http1_upstreams_only_leave_it_out() -> None:
    clusters = [_cluster("web_default"), _cluster("api_default")]
    assert GRPC_WEB not in _filters(_listener("web_default", "api_default"), clusters)


def test_one_http2_upstream_or_the_clients_protocol_keeps_it() -> None:
    h2 = [_cluster("web_default"), _cluster("grpc_default", http2=True)]
    assert GRPC_WEB in _filters(_listener("web_default", "grpc_default"), h2)
    same = [_cluster("web_default"), _cluster("any_default", use_downstream_protocol=True)]
    assert GRPC_WEB in _filters(_listener("web_default", "any_default"), same)


def test_an_unknown_cluster_keeps_it_and_switched_off_stays_off() -> None:
    assert GRPC_WEB in _filters(_listener("elsewhere"), [_cluster("web_default")])
    by_header = _listener()
    route = ir.Route(
        name="r",
        match=ir.RouteMatch(path_kind="prefix", path="/"),
        action=ir.Forward(clusters=(), cluster_header="x-cluster"),
    )
    vhost = dataclasses.replace(by_header.virtual_hosts[0], routes=(route,))
    by_header = dataclasses.replace(by_header, virtual_hosts=(vhost,))
    assert GRPC_WEB in _filters(by_header, [_cluster("web_default")])
    h2 = [_cluster("grpc_default", http2=True)]
    assert GRPC_WEB not in _filters(_listener("grpc_default", grpc_web=False), h2)
