"""The aws_lambda filter as explain describes it: the function of the route, or of each
cluster of a split route, how it is invoked, and where its credentials come from (never
the credentials themselves)."""

from __future__ import annotations

import time

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.config.route.v3 import route_pb2
from envoy.extensions.filters.http.aws_lambda.v3 import aws_lambda_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import any_pb2

from gw.explain.aws import aws_lambda
from gw.explain.context import Context
from gw.explain.paths import prepare_path
from gw.explain.request import Request

NAME = "envoy.filters.http.aws_lambda"
ARN = "arn:aws:lambda:us-east-1:123456789012:function:hello"


def per_route(arn: str, **config: object) -> any_pb2.Any:
    out = any_pb2.Any()
    invoke = aws_lambda_pb2.Config(arn=arn, **config)  # type: ignore[arg-type]
    out.Pack(aws_lambda_pb2.PerRouteConfig(invoke_config=invoke))
    return out


def context(route: rc_pb2.Route) -> Context:
    return Context(
        request=Request(method="GET", scheme="http", authority="x", target="/"),
        prepared=prepare_path("/", normalize=True, merge_slashes=True, unescape_and_redirect=True),
        route=route,
        vhost=rc_pb2.VirtualHost(name="v", domains=["*"], routes=[route]),
        route_config=route_pb2.RouteConfiguration(),
        now=time.time(),
    )


def test_the_routes_function_how_it_is_invoked_and_whose_credentials() -> None:
    found = per_route(
        ARN,
        invocation_mode=aws_lambda_pb2.Config.ASYNCHRONOUS,
        credentials=aws_lambda_pb2.Credentials(access_key_id="AKID", secret_access_key="s3cr3t"),
    )
    step, stop = aws_lambda(hcm_pb2.HttpFilter(name=NAME), found, context(rc_pb2.Route()))
    assert stop is None
    assert step.summary == "invokes the route's AWS Lambda function"
    assert step.details[0] == (
        f"{ARN}, asynchronously (AWS answers 202 at once), the request as JSON (raw_path, "
        "method, headers, query_string_parameters, body), signed with the upstream's credentials"
    )
    assert "POST /2015-03-31/functions/ARN/invocations" in step.details[-1]
    assert not any("AKID" in d or "s3cr3t" in d for d in step.details)


def test_each_cluster_of_a_split_route_has_its_function() -> None:
    route = rc_pb2.Route()
    for cluster, arn in (("a", ARN), ("b", ARN + "-v2")):
        weighted = route.route.weighted_clusters.clusters.add(name=cluster)
        weighted.typed_per_filter_config[NAME].CopyFrom(per_route(arn, payload_passthrough=True))
    step, _ = aws_lambda(hcm_pb2.HttpFilter(name=NAME), None, context(route))
    assert step.summary == "invokes the route's AWS Lambda functions"
    assert step.details[:2] == (
        f"to cluster a: {ARN}, synchronously, the request body as the payload, signed with "
        "credentials from the proxy's environment",
        f"to cluster b: {ARN}-v2, synchronously, the request body as the payload, signed with "
        "credentials from the proxy's environment",
    )


def test_a_route_without_a_function_is_not_acted_on() -> None:
    route = rc_pb2.Route()
    route.route.cluster = "web"
    step, stop = aws_lambda(hcm_pb2.HttpFilter(name=NAME), None, context(route))
    assert (step.acts, stop) == (False, None)
