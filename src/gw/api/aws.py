"""AWS Lambda: the `aws` Upstream (a region's functions) and the route's
`destinationSpec.aws` (which function, and how it is invoked)."""

from __future__ import annotations

from typing import Literal

from gw.api.meta import Model, ResourceRef


class LambdaFunctionSpec(Model):
    logical_name: str = ""
    lambda_function_name: str = ""
    qualifier: str = ""


class AwsDestinationSpec(Model):
    logical_name: str = ""
    invocation_style: Literal["SYNC", "ASYNC"] = "SYNC"
    request_transformation: bool = False
    response_transformation: bool = False
    unwrap_as_alb: bool = False
    unwrap_as_api_gateway: bool = False
    wrap_as_api_gateway: bool = False


class AwsUpstreamSpec(Model):
    region: str = ""
    secret_ref: ResourceRef | None = None
    lambda_functions: list[LambdaFunctionSpec] = []
    role_arn: str = ""
    aws_account_id: str = ""
    disable_role_chaining: bool = False
    destination_overrides: AwsDestinationSpec | None = None
