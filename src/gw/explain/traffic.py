"""The traffic filters of gw's chain as explain walks them: fault injection (an abort every
request gets answers here; one a share of requests gets is a chance, named in the verdict),
the Settings' external processors (their server sees the request and may change or answer
it: explain says so and goes on), CSRF (an unsafe method from another origin is refused),
and the filters whose effect depends on what explain does not see: the request body (the
buffer limit) and DNS (the dynamic forward proxy)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from envoy.extensions.filters.http.buffer.v3 import buffer_pb2
from envoy.extensions.filters.http.csrf.v3 import csrf_pb2
from envoy.extensions.filters.http.dynamic_forward_proxy.v3 import (
    dynamic_forward_proxy_pb2 as dfp_pb2,
)
from envoy.extensions.filters.http.ext_proc.v3 import ext_proc_pb2
from envoy.extensions.filters.http.fault.v3 import fault_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.v3 import percent_pb2

from gw.explain.context import Context, Result, Stop, route_or_listener, unpack
from gw.explain.explanation import CHANCE, FilterStep
from gw.explain.matching import string_matches

#: What Envoy's fault filter answers an aborted request with.
FAULT_ABORT_BODY = "fault filter abort"
CSRF_DENIED = "Invalid origin"
_DENOMINATORS = {
    percent_pb2.FractionalPercent.HUNDRED: 100,
    percent_pb2.FractionalPercent.TEN_THOUSAND: 10_000,
    percent_pb2.FractionalPercent.MILLION: 1_000_000,
}
#: The methods Envoy's CSRF filter checks.
_MODIFYING = frozenset({"POST", "PUT", "DELETE", "PATCH"})


def percent(fraction: percent_pb2.FractionalPercent) -> float:
    return float(fraction.numerator) * 100 / _DENOMINATORS.get(fraction.denominator, 100)


def fault(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = route_or_listener(found, http_filter, fault_pb2.HTTPFault())
    name = http_filter.name
    if not config.HasField("abort") and not config.HasField("delay"):
        return FilterStep(
            name=name, kind="fault", summary="no fault on this route", acts=False
        ), None
    details = []
    if config.HasField("delay"):
        share = percent(config.delay.percentage)
        delay = config.delay.fixed_delay.ToMilliseconds()
        details.append(f"delays {share:g}% of requests by {delay} ms")
    if not config.HasField("abort"):
        return FilterStep(
            name=name, kind="fault", summary="injects faults", details=tuple(details)
        ), None
    status, share = config.abort.http_status, percent(config.abort.percentage)
    details.append(f"aborts {share:g}% of requests with {status}")
    if share >= 100:
        verdict = f"responds {status} {FAULT_ABORT_BODY}"
        step = FilterStep(
            name=name,
            kind="fault",
            summary="injects faults",
            details=tuple(details),
            verdict=verdict,
        )
        return step, Stop("fault", status, FAULT_ABORT_BODY, reason="fault injection")
    verdict = f"{CHANCE} {status} {FAULT_ABORT_BODY} ({share:g}% of requests)"
    step = FilterStep(
        name=name, kind="fault", summary="injects faults", details=tuple(details), verdict=verdict
    )
    return step, None


def ext_proc(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = ext_proc_pb2.ExternalProcessor()
    http_filter.typed_config.Unpack(config)
    per_route = unpack(found, ext_proc_pb2.ExtProcPerRoute())
    name = http_filter.name
    if per_route is not None and per_route.disabled:
        return FilterStep(
            name=name, kind="ext_proc", summary="turned off on this route", acts=False
        ), None
    overrides = per_route.overrides if per_route is not None else None
    service = (
        overrides.grpc_service
        if overrides and overrides.HasField("grpc_service")
        else config.grpc_service
    )
    server = service.envoy_grpc.cluster_name or service.google_grpc.target_uri
    details = [
        "the processor sees the request and may change it or answer it itself",
        "if it cannot be reached, the request goes on"
        if config.failure_mode_allow
        else "if it cannot be reached, Envoy answers 500",
    ]
    if overrides is not None and overrides.HasField("processing_mode"):
        details.append("this route changes what is sent to it (processing mode)")
    step = FilterStep(
        name=name,
        kind="ext_proc",
        summary=f"sends the request to the external processor {server}",
        details=tuple(details),
        verdict="asks the external processor",
    )
    return step, None


def csrf(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    policy = route_or_listener(found, http_filter, csrf_pb2.CsrfPolicy())
    name = http_filter.name
    enforced = percent(policy.filter_enabled.default_value)
    shadow = (
        percent(policy.shadow_enabled.default_value) if policy.HasField("shadow_enabled") else 0
    )
    if enforced == 0 and shadow == 0:
        return FilterStep(
            name=name, kind="csrf", summary="no policy on this route", acts=False
        ), None
    summary = f"CSRF check on {enforced:g}% of requests" + (
        f", counted only on {shadow:g}%" if shadow else ""
    )
    if ctx.request.method not in _MODIFYING:
        return FilterStep(
            name=name,
            kind="csrf",
            summary=summary,
            details=(f"{ctx.request.method} is not checked",),
        ), None
    source = _origin(ctx.request.values("origin")) or _origin(ctx.request.values("referer"))
    target = ctx.request.authority
    allowed = source == target or any(string_matches(m, source) for m in policy.additional_origins)
    detail = f"origin {source or '(none)'} against {target}"
    if allowed or enforced == 0:
        return FilterStep(name=name, kind="csrf", summary=summary, details=(detail,)), None
    if enforced < 100:
        verdict = f"{CHANCE} 403 {CSRF_DENIED} ({enforced:g}% of requests)"
        return FilterStep(
            name=name, kind="csrf", summary=summary, details=(detail,), verdict=verdict
        ), None
    step = FilterStep(
        name=name,
        kind="csrf",
        summary=summary,
        details=(detail,),
        verdict=f"responds 403 {CSRF_DENIED}",
    )
    return step, Stop("csrf", 403, CSRF_DENIED, reason="the request's origin is not the host's")


def _origin(values: list[str]) -> str:
    """The host (and port) of an Origin or Referer value, as Envoy compares it."""
    if not values or not values[0]:
        return ""
    parts = urlsplit(values[0])
    return parts.netloc or values[0]


def buffer(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    per_route = unpack(found, buffer_pb2.BufferPerRoute())
    name = http_filter.name
    if per_route is None or per_route.disabled:
        return FilterStep(
            name=name, kind="buffer", summary="does not buffer on this route", acts=False
        ), None
    limit = per_route.buffer.max_request_bytes.value
    summary = f"holds the whole request body first (at most {limit} bytes)"
    details = ("a larger body is answered 413 Payload Too Large (explain sees no body)",)
    return FilterStep(name=name, kind="buffer", summary=summary, details=details), None


def dynamic_forward_proxy(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    per_route = unpack(found, dfp_pb2.PerRouteConfig())
    host = upstream_host(per_route, ctx.request.values, ctx.request.authority)
    summary = f"resolves {host} through its DNS cache (for routes to the dynamic forward proxy)"
    return FilterStep(name=http_filter.name, kind="dynamic_forward_proxy", summary=summary), None


def upstream_host(per_route: dfp_pb2.PerRouteConfig | None, values: Any, authority: str) -> str:
    """The host the dynamic forward proxy connects to: a literal from the route, the value
    of the header the route names (when sent), else the request's own."""
    if per_route is not None and per_route.host_rewrite_literal:
        return str(per_route.host_rewrite_literal)
    if per_route is not None and per_route.host_rewrite_header:
        sent = values(per_route.host_rewrite_header)
        if sent and sent[0]:
            return str(sent[0])
    return authority
