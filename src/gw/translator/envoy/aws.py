"""AWS Lambda → Envoy's aws_lambda HTTP filter: on a listener whose routes invoke
functions, with each route's function as its per-route config; the filter acts only on
requests to clusters carrying the Lambda metadata (`cluster_metadata`).

The listener-level config must name a function (Envoy requires an ARN), but gw always sets
one per route, so it names one that cannot exist: a route to a Lambda cluster without its
own config (none that gw builds) would get AWS's "function not found".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.aws_lambda.v3 import aws_lambda_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy.packing import pack

AWS_LAMBDA = "envoy.filters.http.aws_lambda"
#: The cluster metadata Envoy's filter looks for, and its key.
LAMBDA_METADATA = "com.amazonaws.lambda"
NO_FUNCTION_ARN = "arn:aws:lambda:us-east-1:000000000000:function:gw-no-function-set"


def invocations(route: ir.Route) -> list[ir.LambdaInvocation]:
    if not isinstance(route.action, ir.Forward):
        return []
    return [c.aws_lambda for c in route.action.clusters if c.aws_lambda is not None]


def lambda_config(invocation: ir.LambdaInvocation) -> aws_lambda_pb2.PerRouteConfig:
    config = aws_lambda_pb2.Config(
        arn=invocation.arn,
        payload_passthrough=invocation.passthrough,
        invocation_mode=(
            aws_lambda_pb2.Config.ASYNCHRONOUS
            if invocation.asynchronous
            else aws_lambda_pb2.Config.SYNCHRONOUS
        ),
    )
    credentials = invocation.credentials
    if credentials is not None:
        config.credentials.CopyFrom(
            aws_lambda_pb2.Credentials(
                access_key_id=credentials.access_key_id,
                secret_access_key=credentials.secret_access_key,
                session_token=credentials.session_token or "",
            )
        )
    return aws_lambda_pb2.PerRouteConfig(invoke_config=config)


def cluster_metadata(cluster: ir.Cluster) -> base_pb2.Metadata | None:
    if not cluster.aws_lambda:
        return None
    out = base_pb2.Metadata()
    out.filter_metadata[LAMBDA_METADATA].CopyFrom(
        struct_pb2.Struct(fields={"egress_gateway": struct_pb2.Value(bool_value=True)})
    )
    return out


class AwsLambdaFilter:
    name = AWS_LAMBDA

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not any(invocations(r) for v in vhosts for r in v.routes):
            return None
        config = aws_lambda_pb2.Config(arn=NO_FUNCTION_ARN, payload_passthrough=True)
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        """A route to one cluster; weighted clusters carry theirs (`routes.py`)."""
        found = invocations(route)
        single = isinstance(route.action, ir.Forward) and len(route.action.clusters) == 1
        config: Message | None = lambda_config(found[0]) if single and found else None
        return config

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()
