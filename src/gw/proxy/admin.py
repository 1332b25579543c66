"""The proxy administration port (19000): Envoy's own admin interface, reached through a
static Envoy listener.

Envoy's admin listens on an abstract Unix socket private to this proxy; a static listener
on the admin port forwards every request to it unchanged, with one exception: SPEC.md
says `GET /logging` lists the loggers, while Envoy 1.40's admin answers that with
`405 Method GET not allowed, POST required` (it treats every `/logging` call as a
change). A Lua filter turns exactly `GET /logging` (no query) into a `POST /logging`
without parameters, which Envoy answers with the list and changes nothing. Changing a level
still takes a POST, as in Envoy.
"""

from __future__ import annotations

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.core.v3 import address_pb2, base_pb2
from envoy.config.endpoint.v3 import endpoint_components_pb2, endpoint_pb2
from envoy.config.listener.v3 import listener_components_pb2, listener_pb2
from envoy.config.route.v3 import route_components_pb2, route_pb2
from envoy.extensions.filters.http.lua.v3 import lua_pb2
from envoy.extensions.filters.http.router.v3 import router_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import any_pb2, duration_pb2, wrappers_pb2
from google.protobuf.message import Message

from gw import defaults

NAME = "gw-proxy-admin"
#: The cluster of Envoy's own admin socket (a name no resource can produce).
CLUSTER = defaults.PROXY_ADMIN_CLUSTER

#: Lists the loggers on `GET /logging`, as SPEC.md's proxy administration interface does.
LIST_LOGGERS_ON_GET = """
function envoy_on_request(handle)
  local headers = handle:headers()
  if headers:get(":method") == "GET" and headers:get(":path") == "/logging" then
    headers:replace(":method", "POST")
  end
end
"""


def admin_socket(node_id: str) -> address_pb2.Address:
    """Where Envoy's admin itself listens: an abstract socket named after the node, so
    that several proxies on one host never share one."""
    return address_pb2.Address(pipe=address_pb2.Pipe(path=f"@gw-proxy-admin-{node_id}"))


def admin_listener(public: address_pb2.Address) -> listener_pb2.Listener:
    manager = hcm_pb2.HttpConnectionManager(
        stat_prefix="proxy_admin",
        route_config=route_pb2.RouteConfiguration(
            name=NAME,
            virtual_hosts=[
                route_components_pb2.VirtualHost(
                    name=NAME,
                    domains=["*"],
                    routes=[
                        route_components_pb2.Route(
                            match=route_components_pb2.RouteMatch(prefix="/"),
                            route=route_components_pb2.RouteAction(
                                cluster=CLUSTER,
                                # Streaming endpoints (/logging?follow, large dumps): no limit.
                                timeout=duration_pb2.Duration(seconds=0),
                            ),
                        )
                    ],
                )
            ],
        ),
        http_filters=[
            hcm_pb2.HttpFilter(
                name="envoy.filters.http.lua",
                typed_config=_pack(
                    lua_pb2.Lua(
                        default_source_code=base_pb2.DataSource(inline_string=LIST_LOGGERS_ON_GET),
                    )
                ),
            ),
            hcm_pb2.HttpFilter(
                name="envoy.filters.http.router", typed_config=_pack(router_pb2.Router())
            ),
        ],
    )
    return listener_pb2.Listener(
        name=NAME,
        address=public,
        enable_reuse_port=wrappers_pb2.BoolValue(value=False),
        # Reachable when client connections hit the proxy's global limit (bootstrap.py).
        ignore_global_conn_limit=True,
        filter_chains=[
            listener_components_pb2.FilterChain(
                filters=[
                    listener_components_pb2.Filter(
                        name="envoy.filters.network.http_connection_manager",
                        typed_config=_pack(manager),
                    )
                ]
            )
        ],
    )


def admin_cluster(node_id: str) -> cluster_pb2.Cluster:
    return cluster_pb2.Cluster(
        name=CLUSTER,
        type=cluster_pb2.Cluster.STATIC,
        connect_timeout=duration_pb2.Duration(seconds=1),
        load_assignment=endpoint_pb2.ClusterLoadAssignment(
            cluster_name=CLUSTER,
            endpoints=[
                endpoint_components_pb2.LocalityLbEndpoints(
                    lb_endpoints=[
                        endpoint_components_pb2.LbEndpoint(
                            endpoint=endpoint_components_pb2.Endpoint(address=admin_socket(node_id))
                        )
                    ]
                )
            ],
        ),
    )


def _pack(message: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed
