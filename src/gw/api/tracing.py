"""`httpConnectionManagerSettings.tracing`: spans of every request, sent to a collector that
an Upstream reaches (Zipkin over HTTP, OpenTelemetry over gRPC). Field names are the
established gateway's `ListenerTracingSettings`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from gw.api.meta import Model, ResourceRef

Percentage = Annotated[float, Field(ge=0, le=100)]


class TracePercentages(Model):
    client_sample_percentage: Percentage | None = None
    random_sample_percentage: Percentage | None = None
    overall_sample_percentage: Percentage | None = None


class ZipkinConfig(Model):
    collector_upstream_ref: ResourceRef | None = None
    cluster_name: str | None = None
    collector_endpoint: str = ""
    # The established spelling, which the camel-case generator would write `traceId128Bit`.
    trace_id_128bit: bool | None = Field(default=None, alias="traceId128bit")
    shared_span_context: bool | None = None
    collector_endpoint_version: (
        Literal["DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE", "HTTP_JSON", "HTTP_PROTO"] | None
    ) = None


class OpenTelemetryGrpcService(Model):
    authority: str = ""


class OpenTelemetryConfig(Model):
    collector_upstream_ref: ResourceRef | None = None
    cluster_name: str | None = None
    service_name: str = ""
    grpc_service: OpenTelemetryGrpcService | None = None
    max_cache_size: Annotated[int, Field(ge=0, le=2**32 - 1)] | None = None


class TracingTagEnvironmentVariable(Model):
    tag: str | None = None
    name: str | None = None
    default_value: str | None = None


class TracingTagLiteral(Model):
    tag: str | None = None
    value: str | None = None


class TracingTagMetadataValue(Model):
    namespace: str = ""
    key: str = ""
    nested_field_delimiter: str = ""


class TracingTagMetadata(Model):
    tag: str = ""
    kind: Literal["REQUEST", "ENDPOINT"] | None = None
    value: TracingTagMetadataValue | None = None
    default_value: str = ""


class ListenerTracingSettings(Model):
    request_headers_for_tags: list[str] = []
    verbose: bool | None = None
    trace_percentages: TracePercentages | None = None
    zipkin_config: ZipkinConfig | None = None
    open_telemetry_config: OpenTelemetryConfig | None = None
    # Parsed so that a manifest using them gets a status naming them (not built).
    datadog_config: dict[str, Any] | None = None
    open_census_config: dict[str, Any] | None = None
    environment_variables_for_tags: list[TracingTagEnvironmentVariable] = []
    literals_for_tags: list[TracingTagLiteral] = []
    metadata_for_tags: list[TracingTagMetadata] = []
    spawn_upstream_span: bool = False
