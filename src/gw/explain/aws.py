"""Envoy's aws_lambda filter for one request: which function the route invokes and how.

The function is the route's per-filter config, or, on a route that splits between clusters,
each cluster's own (Envoy reads the one of the cluster it picks). The filter acts only on
requests to clusters that carry the Lambda metadata, which gw gives its Lambda clusters;
credentials are named by where they come from, never shown.
"""

from __future__ import annotations

from typing import Any

from envoy.extensions.filters.http.aws_lambda.v3 import aws_lambda_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.explain.context import Context, Result, unpack
from gw.explain.explanation import FilterStep

KIND = "aws_lambda"


def aws_lambda(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    configs: list[tuple[str, aws_lambda_pb2.PerRouteConfig]] = []
    if found is not None:
        configs.append(("", unpack(found, aws_lambda_pb2.PerRouteConfig())))
    elif ctx.route is not None and ctx.route.route.HasField("weighted_clusters"):
        for weighted in ctx.route.route.weighted_clusters.clusters:
            own = weighted.typed_per_filter_config.get(http_filter.name)
            if own is not None:
                config = unpack(own, aws_lambda_pb2.PerRouteConfig())
                configs.append((f"to cluster {weighted.name}: ", config))
    if not configs:
        summary = "acts on requests to Lambda clusters only; this route names no function"
        return FilterStep(name=http_filter.name, kind=KIND, summary=summary, acts=False), None
    details = (
        *(prefix + _invocation(c.invoke_config) for prefix, c in configs),
        "the upstream gets Lambda's Invoke call (POST /2015-03-31/functions/ARN/invocations) "
        "in place of the request's method and path",
    )
    summary = "invokes the route's AWS Lambda function" + ("s" if len(configs) > 1 else "")
    step = FilterStep(
        name=http_filter.name,
        kind=KIND,
        summary=summary,
        details=details,
        verdict="passes (the function answers)",
    )
    return step, None


def _invocation(config: aws_lambda_pb2.Config) -> str:
    mode = (
        "asynchronously (AWS answers 202 at once)"
        if config.invocation_mode == aws_lambda_pb2.Config.ASYNCHRONOUS
        else "synchronously"
    )
    payload = (
        "the request body as the payload"
        if config.payload_passthrough
        else "the request as JSON (raw_path, method, headers, query_string_parameters, body)"
    )
    if config.HasField("credentials"):
        signed = "signed with the upstream's credentials"
    elif config.credentials_profile:
        signed = f"signed with credentials profile {config.credentials_profile}"
    else:
        signed = "signed with credentials from the proxy's environment"
    return f"{config.arn}, {mode}, {payload}, {signed}"
