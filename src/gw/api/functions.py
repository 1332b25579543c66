"""What an upstream serves beyond plain HTTP (`serviceSpec`: REST or gRPC descriptions) and
the function a route calls on it (`destinationSpec`)."""

from __future__ import annotations

from typing import Any

from gw.api.aws import AwsDestinationSpec
from gw.api.meta import Model


class ServiceSpec(Model):
    """One of `rest`, `grpc` (deprecated) and `grpcJsonTranscoder`. Kept as written: gw
    reads which one it is, not the function descriptions inside."""

    rest: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None
    grpc_json_transcoder: dict[str, Any] | None = None


class DestinationSpec(Model):
    """One of `aws`, `azure`, `rest` and `grpc`."""

    aws: AwsDestinationSpec | None = None
    azure: dict[str, Any] | None = None
    rest: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None
