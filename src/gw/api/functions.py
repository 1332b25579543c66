"""What an upstream serves beyond plain HTTP (`serviceSpec`: REST or gRPC descriptions) and
the function a route calls on it (`destinationSpec`)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

from gw.api.aws import AwsDestinationSpec
from gw.api.azure import AzureDestinationSpec
from gw.api.meta import Model


class ServiceSpec(Model):
    """One of `rest`, `grpc` (deprecated) and `grpcJsonTranscoder`. Kept as written: gw
    reads which one it is, not the function descriptions inside."""

    rest: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None
    grpc_json_transcoder: dict[str, Any] | None = None


class DestinationSpec(Model):
    """One of `aws`, `azure`, `rest` and `grpc`; gw calls `aws` and `azure` functions, and
    refuses the others where they are written (a route, a route table, an upstream group)."""

    aws: AwsDestinationSpec | None = None
    azure: AzureDestinationSpec | None = None
    rest: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None

    @field_validator("rest", "grpc")
    @classmethod
    def _not_supported(cls, value: Any, info: ValidationInfo) -> Any:
        raise ValueError(
            f"destinationSpec.{to_camel(info.field_name or '')} is not supported in gw: calling "
            "the functions of a service spec needs function discovery, which gw does not do"
        )
