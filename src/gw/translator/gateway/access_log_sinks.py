"""An access log's gRPC sinks → `ir.AccessLog`: Envoy's gRPC access log service
(`grpcService`) and an OpenTelemetry collector (`openTelemetryService`).

The established `grpcService` names its service by `staticClusterName`, a cluster of the
proxy's bootstrap; gw's proxies have no such clusters, so the name must be the cluster of an
Upstream, `<name>_<namespace>` (the Upstream is resolved like every reference: a missing or
rejected one rejects the Gateway, since Envoy refuses a logger whose cluster does not exist),
and that Upstream must speak HTTP/2 (gRPC). An OpenTelemetry collector is named by its
`endpoint` (`host:port`); gw makes its cluster (`collector_clusters`), HTTP/2, over TLS unless
`insecure` (the collector's certificate is then not verified, as in the established gateway,
and the Gateway warns so).
"""

from __future__ import annotations

import json
from typing import Any

from gw import api
from gw.api import ResourceKey
from gw.api.access_log import GrpcService, OpenTelemetryService
from gw.api.duration import duration_ms
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem, line_break_problem
from gw.translator.gateway.hosts import checked_address
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

#: The keys of an OpenTelemetry `AnyValue` (one of them) and of a `KeyValue`.
_ANY_VALUE = frozenset(
    {
        "stringValue",
        "boolValue",
        "intValue",
        "doubleValue",
        "arrayValue",
        "kvlistValue",
        "bytesValue",
    }
)


def grpc_log(
    service: GrpcService,
    field: str,
    log_filter: ir.LogFilter | None,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> ir.AccessLog | None:
    errors = len(report.errors)
    if not service.log_name:
        report.error(f"{field}.logName", "name the log (the service receives it with each entry)")
    cluster = static_cluster(
        service.static_cluster_name, f"{field}.staticClusterName", refs, owner, report
    )
    for name, headers in (
        ("additionalRequestHeadersToLog", service.additional_request_headers_to_log),
        ("additionalResponseHeadersToLog", service.additional_response_headers_to_log),
        ("additionalResponseTrailersToLog", service.additional_response_trailers_to_log),
    ):
        for i, header in enumerate(headers):
            if (problem := header_name_problem(header)) is not None and not header.startswith(":"):
                report.error(f"{field}.{name}[{i}]", problem)
    if cluster is None or len(report.errors) > errors:
        return None
    return ir.AccessLog(
        sink="grpc",
        log_name=service.log_name,
        cluster=cluster,
        request_headers=tuple(service.additional_request_headers_to_log),
        response_headers=tuple(service.additional_response_headers_to_log),
        response_trailers=tuple(service.additional_response_trailers_to_log),
        filter_state_objects=tuple(service.filter_state_objects_to_log),
        filter=log_filter,
    )


def static_cluster(
    name: str | None, field: str, refs: Refs, owner: ResourceKey, report: ResourceReport
) -> str | None:
    """The cluster `staticClusterName` names: an Upstream's, `<name>_<namespace>`."""
    upstream, _, namespace = (name or "").partition("_")
    ref = api.ResourceRef(name=upstream, namespace=namespace)
    plausible = bool(upstream and namespace and "_" not in namespace)
    found = refs.resolve(api.Upstream, ref, referrer=owner, field=field) if plausible else None
    if found is None:
        if not plausible or not refs.exists(refs.key(api.Upstream, ref, owner)):
            report.error(
                field,
                f"{name or 'an empty name'} is not a cluster gw serves: gw's proxies have no "
                "static clusters; declare the access log service as an Upstream "
                "(useHttp2: true) and name its cluster, <name>_<namespace> (e.g. "
                "als_gw-system for the Upstream als in gw-system)",
            )
        return None  # a broken one rejects this gateway through the reference
    if not found.spec.use_http2:
        report.error(
            field,
            f"the access log service is reached over gRPC: set useHttp2: true on Upstream "
            f"{namespace}.{upstream}",
        )
        return None
    return name


def otel_log(
    service: OpenTelemetryService,
    field: str,
    log_filter: ir.LogFilter | None,
    owner: ResourceKey,
    report: ResourceReport,
) -> ir.AccessLog | None:
    errors = len(report.errors)
    if not service.log_name:
        report.error(f"{field}.logName", "name the log (the collector receives it with each entry)")
    collector = service.collector
    where = f"{field}.collector"
    if collector is None:
        report.error(where, "name the collector: collector.endpoint (host:port)")
        return None
    host, _, port = collector.endpoint.rpartition(":")
    address = None
    if not host or not port.isdigit():
        report.error(f"{where}.endpoint", f"{collector.endpoint!r} is not host:port")
    else:
        address = checked_address(host.strip("[]"), int(port), where, report, name="endpoint")
    if collector.ssl_config is not None:
        report.error(
            f"{where}.sslConfig",
            "sslConfig is not supported for collectors yet: use insecure: true (plaintext) or "
            "leave both unset (TLS)",
        )
    for key, text in sorted(collector.headers.items()):
        if (problem := header_name_problem(key) or line_break_problem(text)) is not None:
            report.error(f"{where}.headers.{key}", problem)
    for part, value in (("body", service.body), ("attributes", service.attributes)):
        if value is not None and (problem := _otel_value_problem(part, value)) is not None:
            report.error(f"{field}.{part}", problem)
    if address is None or len(report.errors) > errors:
        return None
    if not collector.insecure:
        report.warning(
            f"{where}.insecure",
            "the collector is reached over TLS without verifying its certificate (as the "
            "established gateway does); set insecure: true for plaintext",
        )
    return ir.AccessLog(
        sink="opentelemetry",
        log_name=service.log_name,
        cluster=_collector_cluster(owner, service.log_name),
        collector=ir.LogCollector(
            address=address,
            port=int(port),
            tls=not collector.insecure,
            authority=collector.authority,
            headers=tuple(sorted(collector.headers.items())),
            connect_timeout_ms=(
                max(1, int(duration_ms(collector.timeout))) if collector.timeout else None
            ),
        ),
        otel_body=json.dumps(service.body, sort_keys=True) if service.body else None,
        otel_attributes=(
            json.dumps(service.attributes, sort_keys=True) if service.attributes else None
        ),
        disable_builtin_labels=service.disable_builtin_labels,
        filter_state_objects=tuple(service.filter_state_objects_to_log),
        filter=log_filter,
    )


def collector_clusters(options: ir.ListenerOptions, source: ir.SourceRef) -> tuple[ir.Cluster, ...]:
    """The clusters of the OpenTelemetry collectors a listener's access logs send to."""
    out: dict[str, ir.Cluster] = {}
    for log in (*options.access_logs, *options.listener_access_logs):
        collector = log.collector
        if collector is None or log.cluster in out:
            continue
        ip = all(c.isdigit() or c in ".:" for c in collector.address)
        out[log.cluster] = ir.Cluster(
            name=log.cluster,
            source=source,
            discovery="static" if ip else "dns",
            endpoints=(ir.Endpoint(address=collector.address, port=collector.port),),
            connect_timeout_ms=collector.connect_timeout_ms or 5000,
            http2=True,
            tls=ir.UpstreamTls(sni=None if ip else collector.address) if collector.tls else None,
        )
    return tuple(out[name] for name in sorted(out))


def _collector_cluster(owner: ResourceKey, log_name: str) -> str:
    """gw's own name for the cluster (no Upstream can make a name with `~`)."""
    return f"gw~otel-logs~{owner.namespace}.{owner.name}~{log_name}"


def _otel_value_problem(name: str, value: dict[str, Any]) -> str | None:
    if name == "attributes":
        values = value.get("values")
        if set(value) - {"values"} or not isinstance(values, list):
            return "attributes is {values: [{key, value: {stringValue: ...}}]}"
        for item in values:
            if not isinstance(item, dict) or not isinstance(item.get("key"), str):
                return "each attribute is {key, value: {stringValue: ...}}"
            if (problem := _otel_value_problem("value", item.get("value") or {})) is not None:
                return problem
        return None
    if len(value) != 1 or not set(value) <= _ANY_VALUE:
        kinds = ", ".join(sorted(_ANY_VALUE))
        return f"{name} is one of {kinds}, e.g. {{stringValue: '%REQ(:PATH)%'}}"
    return None
