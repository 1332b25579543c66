"""AWS Lambda: the function a route invokes through Envoy's aws_lambda filter."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class AwsCredentials:
    """From the upstream's secret; without them Envoy uses its own credential chain
    (environment, files, instance or task metadata)."""

    access_key_id: str
    secret_access_key: str
    session_token: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LambdaInvocation:
    """`arn` of the function (with its qualifier); `passthrough`: the request body is the
    payload and the function's answer is the response, else both are wrapped in JSON."""

    arn: str
    passthrough: bool = True
    asynchronous: bool = False
    credentials: AwsCredentials | None = None
