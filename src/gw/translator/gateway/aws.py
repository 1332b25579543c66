"""AWS Lambda: an `aws` Upstream → a cluster to the region's Lambda endpoint, and a route's
`destinationSpec.aws` → the `ir.LambdaInvocation` Envoy's aws_lambda filter performs.

The cluster is `lambda.<region>.amazonaws.com:443` over TLS (`.amazonaws.com.cn` in China
regions). Credentials come from the upstream's `secretRef` (an Opaque secret with
`aws_access_key_id`, `aws_secret_access_key` and optionally `aws_session_token`, as the
established CLI writes it); without one, Envoy uses its own credential chain (environment,
credentials file, instance or task metadata).

Envoy invokes functions by ARN: a function's `lambdaFunctionName` may be one, else the ARN
is made from the region, `awsAccountId`, the name and the `qualifier`. Envoy's filter wraps
the request in JSON and unwraps a JSON response together (`payload_passthrough: false`), so
`requestTransformation` goes with `unwrapAsAlb` or `unwrapAsApiGateway`.
"""

from __future__ import annotations

import re

from gw import api
from gw.api.aws import AwsDestinationSpec, AwsUpstreamSpec, LambdaFunctionSpec
from gw.api.functions import DestinationSpec
from gw.translator import ir
from gw.translator.gateway.secrets import resolve_secret
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d+")
ACCESS_KEY = "aws_access_key_id"
SECRET_KEY = "aws_secret_access_key"
SESSION_TOKEN = "aws_session_token"
LAMBDA_PORT = 443


def lambda_host(region: str) -> str:
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"lambda.{region}.{suffix}"


def check_aws_upstream(
    upstream: api.Upstream, refs: Refs, report: ResourceReport
) -> tuple[ir.Endpoint, ...]:
    """The Lambda endpoint of a valid `aws` upstream; () after reporting what is wrong."""
    spec = upstream.spec.aws
    assert spec is not None
    field = "spec.aws"
    errors = len(report.errors)
    if not _REGION.fullmatch(spec.region):
        report.error(f"{field}.region", f"{spec.region!r} is not an AWS region (e.g. us-east-1)")
    if spec.role_arn:
        report.error(
            f"{field}.roleArn",
            "roleArn is not supported in gw: Envoy's aws_lambda filter cannot assume a role "
            "per upstream; give the proxy AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE (its "
            "credential chain assumes that role) and leave roleArn and secretRef unset",
        )
    if spec.disable_role_chaining:
        report.warning(f"{field}.disableRoleChaining", "no effect: gw assumes no role")
    for i, function in enumerate(spec.lambda_functions):
        where = f"{field}.lambdaFunctions[{i}]"
        if not function.logical_name or not function.lambda_function_name:
            report.error(where, "a lambda function needs logicalName and lambdaFunctionName")
        elif not function.lambda_function_name.startswith("arn:") and not spec.aws_account_id:
            report.error(
                f"{field}.awsAccountId",
                f"needed to invoke {function.lambda_function_name} by ARN, as Envoy's "
                "aws_lambda filter does: set awsAccountId, or give lambdaFunctionName as the "
                "function's full ARN",
            )
    if spec.secret_ref is not None:
        aws_credentials(upstream, spec, refs, report)
    if len(report.errors) > errors:
        return ()
    return (ir.Endpoint(address=lambda_host(spec.region), port=LAMBDA_PORT),)


def aws_credentials(
    upstream: api.Upstream, spec: AwsUpstreamSpec, refs: Refs, report: ResourceReport | None
) -> ir.AwsCredentials | None:
    """The credentials in the upstream's secret; problems go to `report` when given."""
    if spec.secret_ref is None:
        return None
    field = "spec.aws.secretRef"
    missing = "list did not find secret {where}"
    secret, key = resolve_secret(
        spec.secret_ref, upstream.key, field, refs, report, missing=missing
    )
    if secret is None:
        return None
    access, secret_key = secret.value(ACCESS_KEY), secret.value(SECRET_KEY)
    if not access or not secret_key:
        if report is not None:
            report.error(
                field,
                f"secret ({key.name}.{key.namespace}) is not an AWS secret: it needs "
                f"{ACCESS_KEY} and {SECRET_KEY}",
            )
        return None
    return ir.AwsCredentials(
        access_key_id=access,
        secret_access_key=secret_key,
        session_token=secret.value(SESSION_TOKEN) or None,
    )


def resolve_lambda(
    upstream: api.Upstream | None,
    destination: DestinationSpec | None,
    refs: Refs,
    field: str,
    report: ResourceReport,
) -> tuple[bool, ir.LambdaInvocation | None]:
    """(ok, invocation) for a route destination: the function it invokes when `upstream`
    is an `aws` one; ok is False after reporting a problem."""
    spec = upstream.spec.aws if upstream is not None else None
    where = f"{field}.destinationSpec"
    wanted = destination.aws if destination is not None else None
    if spec is None or upstream is None:
        if wanted is not None:
            report.error(f"{where}.aws", "destinationSpec.aws needs an aws Upstream")
            return False, None
        return True, None
    if wanted is None:
        report.error(
            where,
            f"a route to aws Upstream {upstream.metadata.namespace}.{upstream.metadata.name} "
            "needs destinationSpec.aws.logicalName naming one of its lambdaFunctions",
        )
        return False, None
    invocation = _invocation(upstream, spec, _merged(wanted, spec), refs, f"{where}.aws", report)
    return invocation is not None, invocation


def _merged(wanted: AwsDestinationSpec, spec: AwsUpstreamSpec) -> AwsDestinationSpec:
    """The upstream's `destinationOverrides`: its set (non-false) values win."""
    overrides = spec.destination_overrides
    if overrides is None:
        return wanted
    update = {
        name: value for name, value in overrides.model_dump().items() if value and value != "SYNC"
    }
    return wanted.model_copy(update=update)


def _invocation(
    upstream: api.Upstream,
    spec: AwsUpstreamSpec,
    wanted: AwsDestinationSpec,
    refs: Refs,
    field: str,
    report: ResourceReport,
) -> ir.LambdaInvocation | None:
    if not spec.lambda_functions:
        report.error(field, f"lambda points to upstream with no functions {wanted.logical_name}")
        return None
    function = next(
        (f for f in spec.lambda_functions if f.logical_name == wanted.logical_name), None
    )
    if function is None:
        report.error(f"{field}.logicalName", f"unknown lambda function {wanted.logical_name}")
        return None
    unwrap_gateway = wanted.unwrap_as_api_gateway or wanted.response_transformation
    if wanted.unwrap_as_alb and unwrap_gateway:
        report.error(
            field,
            "only one of unwrapAsAlb and unwrapAsApiGateway/responseTransformation may be set",
        )
        return None
    if wanted.wrap_as_api_gateway:
        report.error(
            f"{field}.wrapAsApiGateway",
            "wrapAsApiGateway is not supported in gw: Envoy's aws_lambda filter wraps requests "
            "in its own JSON shape (requestTransformation), not in API Gateway events",
        )
        return None
    unwrap = wanted.unwrap_as_alb or unwrap_gateway
    if wanted.request_transformation != unwrap:
        report.error(
            field,
            "Envoy's aws_lambda filter wraps the request in JSON and unwraps the JSON response "
            "together: set requestTransformation and one of unwrapAsAlb and unwrapAsApiGateway, "
            "or none of them",
        )
        return None
    return ir.LambdaInvocation(
        arn=function_arn(spec, function),
        passthrough=not unwrap,
        asynchronous=wanted.invocation_style == "ASYNC",
        credentials=aws_credentials(upstream, spec, refs, None),
    )


def function_arn(spec: AwsUpstreamSpec, function: LambdaFunctionSpec) -> str:
    name = function.lambda_function_name
    if not name.startswith("arn:"):
        partition = (
            "aws-cn"
            if spec.region.startswith("cn-")
            else "aws-us-gov"
            if spec.region.startswith("us-gov-")
            else "aws"
        )
        name = f"arn:{partition}:lambda:{spec.region}:{spec.aws_account_id}:function:{name}"
    if function.qualifier and name.count(":") == 6:
        name += f":{function.qualifier}"
    return name
