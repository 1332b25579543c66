"""`ir.Tracing` → the tracing of an HTTP connection manager: Zipkin over HTTP or
OpenTelemetry over gRPC, to the collector's cluster, with the sampling and tags asked for."""

from __future__ import annotations

from envoy.config.core.v3 import grpc_service_pb2
from envoy.config.trace.v3 import http_tracer_pb2, opentelemetry_pb2, zipkin_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.metadata.v3 import metadata_pb2
from envoy.type.tracing.v3 import custom_tag_pb2
from envoy.type.v3 import percent_pb2
from google.protobuf import wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack


def build_tracing(tracing: ir.Tracing) -> hcm_pb2.HttpConnectionManager.Tracing:
    out = hcm_pb2.HttpConnectionManager.Tracing(
        verbose=tracing.verbose,
        custom_tags=[_tag(t) for t in tracing.tags],
        provider=http_tracer_pb2.Tracing.Http(
            name=names.ZIPKIN if tracing.provider == "zipkin" else names.OPENTELEMETRY,
            typed_config=pack(_provider(tracing)),
        ),
    )
    for field, value in (
        ("client_sampling", tracing.client_sampling),
        ("random_sampling", tracing.random_sampling),
        ("overall_sampling", tracing.overall_sampling),
    ):
        if value is not None:
            getattr(out, field).CopyFrom(percent_pb2.Percent(value=value))
    if tracing.spawn_upstream_span:
        out.spawn_upstream_span.CopyFrom(wrappers_pb2.BoolValue(value=True))
    return out


def _provider(
    tracing: ir.Tracing,
) -> zipkin_pb2.ZipkinConfig | opentelemetry_pb2.OpenTelemetryConfig:
    if tracing.provider == "zipkin":
        zipkin: zipkin_pb2.ZipkinConfig = zipkin_pb2.ZipkinConfig(
            collector_cluster=tracing.collector_cluster,
            collector_endpoint=tracing.zipkin_endpoint,
            trace_id_128bit=tracing.trace_id_128bit,
            collector_endpoint_version=zipkin_pb2.ZipkinConfig.CollectorEndpointVersion.Value(
                tracing.zipkin_version
            ),
        )
        if tracing.shared_span_context is not None:
            zipkin.shared_span_context.CopyFrom(
                wrappers_pb2.BoolValue(value=tracing.shared_span_context)
            )
        return zipkin
    otel: opentelemetry_pb2.OpenTelemetryConfig = opentelemetry_pb2.OpenTelemetryConfig(
        grpc_service=grpc_service_pb2.GrpcService(
            envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
                cluster_name=tracing.collector_cluster, authority=tracing.authority
            )
        ),
        service_name=tracing.service_name,
    )
    if tracing.max_cache_size is not None:
        otel.max_cache_size.CopyFrom(wrappers_pb2.UInt32Value(value=tracing.max_cache_size))
    return otel


def _tag(tag: ir.TracingTag) -> custom_tag_pb2.CustomTag:
    out = custom_tag_pb2.CustomTag(tag=tag.tag)
    if tag.source == "request_header":
        out.request_header.CopyFrom(custom_tag_pb2.CustomTag.Header(name=tag.name))
    elif tag.source == "environment":
        out.environment.CopyFrom(
            custom_tag_pb2.CustomTag.Environment(name=tag.name, default_value=tag.default)
        )
    elif tag.source == "literal":
        out.literal.CopyFrom(custom_tag_pb2.CustomTag.Literal(value=tag.name))
    else:
        kind = metadata_pb2.MetadataKind()
        if tag.kind == "ENDPOINT":
            kind.host.CopyFrom(metadata_pb2.MetadataKind.Host())
        else:
            kind.request.CopyFrom(metadata_pb2.MetadataKind.Request())
        out.metadata.CopyFrom(
            custom_tag_pb2.CustomTag.Metadata(
                kind=kind,
                metadata_key=metadata_pb2.MetadataKey(
                    key=tag.name,
                    path=[metadata_pb2.MetadataKey.PathSegment(key=k) for k in tag.key],
                ),
                default_value=tag.default,
            )
        )
    return out
