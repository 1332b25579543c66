"""`httpConnectionManagerSettings.tracing` → `ir.Tracing`: spans sent to a collector.

The collector is an Upstream (`collectorUpstreamRef`), resolved here like every reference:
a missing or rejected one rejects the Gateway (Envoy refuses a tracer whose cluster does
not exist). A raw Envoy `clusterName` is refused: it could name any cluster, gw's own
included. OpenTelemetry is sent over gRPC, so its Upstream must speak HTTP/2
(`useHttp2: true`). Datadog and OpenCensus are not built (OpenCensus left Envoy).
"""

from __future__ import annotations

import dataclasses

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.tracing import (
    ListenerTracingSettings,
    OpenTelemetryConfig,
    TracePercentages,
    ZipkinConfig,
)
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def build_tracing(
    tracing: ListenerTracingSettings,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
    field: str,
) -> ir.Tracing | None:
    """The tracing of a listener, or None after reporting why it cannot be built."""
    for name, value in (
        ("datadogConfig", tracing.datadog_config),
        ("openCensusConfig", tracing.open_census_config),
    ):
        if value is not None:
            report.error(
                f"{field}.{name}",
                f"{name} is not supported: gw sends spans to Zipkin (zipkinConfig) or "
                "OpenTelemetry (openTelemetryConfig) collectors",
            )
            return None
    zipkin, otel = tracing.zipkin_config, tracing.open_telemetry_config
    if (zipkin is None) == (otel is None):
        report.error(field, "set exactly one of zipkinConfig and openTelemetryConfig")
        return None
    config: ZipkinConfig | OpenTelemetryConfig | None = zipkin if zipkin is not None else otel
    assert config is not None
    where = f"{field}.{'zipkinConfig' if zipkin else 'openTelemetryConfig'}"
    cluster = _collector(config, refs, owner, report, where, grpc=otel is not None)
    tags = _tags(tracing, report, field)
    if cluster is None or tags is None:
        return None
    percentages = tracing.trace_percentages or TracePercentages()
    base = ir.Tracing(
        provider="zipkin" if zipkin is not None else "opentelemetry",
        collector_cluster=cluster,
        verbose=bool(tracing.verbose),
        client_sampling=percentages.client_sample_percentage,
        random_sampling=percentages.random_sample_percentage,
        overall_sampling=percentages.overall_sample_percentage,
        tags=tags,
        spawn_upstream_span=tracing.spawn_upstream_span,
    )
    if zipkin is not None:
        if not zipkin.collector_endpoint.startswith("/"):
            report.error(
                f"{where}.collectorEndpoint",
                "the collector's path is required and starts with /, e.g. /api/v2/spans",
            )
            return None
        if zipkin.collector_endpoint_version == "DEPRECATED_AND_UNAVAILABLE_DO_NOT_USE":
            report.error(f"{where}.collectorEndpointVersion", "use HTTP_JSON or HTTP_PROTO")
            return None
        return dataclasses.replace(
            base,
            zipkin_endpoint=zipkin.collector_endpoint,
            zipkin_version=zipkin.collector_endpoint_version or "HTTP_JSON",
            trace_id_128bit=bool(zipkin.trace_id_128bit),
            shared_span_context=zipkin.shared_span_context,
        )
    assert otel is not None
    return dataclasses.replace(
        base,
        service_name=otel.service_name,
        authority=otel.grpc_service.authority if otel.grpc_service else "",
        max_cache_size=otel.max_cache_size,
    )


def _collector(
    config: ZipkinConfig | OpenTelemetryConfig,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
    field: str,
    *,
    grpc: bool,
) -> str | None:
    """The cluster of the collector's Upstream."""
    if config.cluster_name is not None:
        report.error(
            f"{field}.clusterName",
            "clusterName is not supported: name the collector's Upstream in collectorUpstreamRef",
        )
        return None
    ref: ResourceRef | None = config.collector_upstream_ref
    if ref is None:
        report.error(f"{field}.collectorUpstreamRef", "name the collector's Upstream")
        return None
    where = f"{field}.collectorUpstreamRef"
    key = refs.key(api.Upstream, ref, owner)
    found = refs.resolve(api.Upstream, ref, referrer=owner, field=where)
    if found is None:
        if not refs.exists(key):
            report.error(where, f"*v1.Upstream {{ {key.namespace}.{key.name} }} not found")
        return None  # a broken one rejects this gateway through the reference
    if grpc and not found.spec.use_http2:
        report.error(
            where,
            f"the OpenTelemetry collector is reached over gRPC: set useHttp2: true on "
            f"Upstream {key.namespace}.{key.name}",
        )
        return None
    return cluster_name(key.name, key.namespace)


def _tags(
    tracing: ListenerTracingSettings, report: ResourceReport, field: str
) -> tuple[ir.TracingTag, ...] | None:
    errors = len(report.errors)
    out: list[ir.TracingTag] = []
    for i, header in enumerate(tracing.request_headers_for_tags):
        if (problem := header_name_problem(header)) is not None:
            report.error(f"{field}.requestHeadersForTags[{i}]", problem)
        out.append(ir.TracingTag(tag=header, source="request_header", name=header))
    for i, env in enumerate(tracing.environment_variables_for_tags):
        if not env.tag or not env.name:
            report.error(f"{field}.environmentVariablesForTags[{i}]", "set tag and name")
            continue
        out.append(
            ir.TracingTag(
                tag=env.tag, source="environment", name=env.name, default=env.default_value or ""
            )
        )
    for i, literal in enumerate(tracing.literals_for_tags):
        if not literal.tag or literal.value is None:
            report.error(f"{field}.literalsForTags[{i}]", "set tag and value")
            continue
        out.append(ir.TracingTag(tag=literal.tag, source="literal", name=literal.value))
    for i, meta in enumerate(tracing.metadata_for_tags):
        value = meta.value
        if not meta.tag or value is None or not value.namespace or not value.key:
            report.error(f"{field}.metadataForTags[{i}]", "set tag, value.namespace and value.key")
            continue
        delimiter = value.nested_field_delimiter
        out.append(
            ir.TracingTag(
                tag=meta.tag,
                source="metadata",
                name=value.namespace,
                kind=meta.kind or "REQUEST",
                key=tuple(value.key.split(delimiter)) if delimiter else (value.key,),
                default=meta.default_value,
            )
        )
    return tuple(out) if len(report.errors) == errors else None
