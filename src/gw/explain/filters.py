"""The HTTP filter chain of the connection manager, walked in order for one request.

Each filter's configuration for the request is the listener's, refined by the most specific
`typed_per_filter_config` under the filter's name (route, then virtual host, then route
configuration, as Envoy reads it); a filter marked `disabled` acts only where such a config
turns it on. The first filter that answers the request ends the walk (`Stop`); the router
then has nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.filters.http.ext_authz.v3 import ext_authz_pb2
from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2
from envoy.extensions.filters.http.local_ratelimit.v3 import local_rate_limit_pb2 as local_pb2
from envoy.extensions.filters.http.ratelimit.v3 import rate_limit_pb2
from envoy.extensions.filters.http.rbac.v3 import rbac_pb2 as rbac_filter_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import any_pb2

from gw.explain import aws, headers, jwt, ratelimits, rbac, traffic
from gw.explain.context import Context, Result, Stop, route_or_listener, unpack
from gw.explain.explanation import FilterStep

_FILTER_CONFIG = "type.googleapis.com/envoy.config.route.v3.FilterConfig"
EXTAUTH_SERVER_MISSING = "extauth-server-not-configured"


def walk(
    manager: hcm_pb2.HttpConnectionManager, ctx: Context
) -> tuple[list[FilterStep], Stop | None]:
    steps: list[FilterStep] = []
    for http_filter in manager.http_filters:
        full = http_filter.typed_config.type_url.rsplit("/", 1)[-1]
        if full == ROUTER:
            break
        kind, handler = _HANDLERS.get(full, (full.rsplit(".", 1)[-1], None))
        per_route, off = _per_route(http_filter.name, ctx)
        if off or (http_filter.disabled and per_route is None):
            why = "turned off on this route" if off else "off unless a route turns it on"
            steps.append(FilterStep(name=http_filter.name, kind=kind, summary=why, acts=False))
            continue
        if handler is None:
            steps.append(
                FilterStep(
                    name=http_filter.name,
                    kind=kind,
                    summary="explain does not evaluate this filter",
                    verdict="unknown",
                )
            )
            continue
        step, stop = handler(http_filter, per_route, ctx)
        steps.append(step)
        if stop is not None:
            return steps, stop
    return steps, None


def _per_route(name: str, ctx: Context) -> tuple[any_pb2.Any | None, bool]:
    """The most specific per-filter config for `name`, and whether it turns the filter off."""
    if ctx.route is None or ctx.vhost is None:
        return None, False
    for holder in (ctx.route, ctx.vhost, ctx.route_config):
        found = holder.typed_per_filter_config.get(name)
        if found is None:
            continue
        if found.type_url == _FILTER_CONFIG:
            wrapper = rc_pb2.FilterConfig()
            found.Unpack(wrapper)
            return (None, True) if wrapper.disabled else (wrapper.config, False)
        return found, False
    return None, False


def _jwt(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = jwt_pb2.JwtAuthentication()
    http_filter.typed_config.Unpack(config)
    per_route = unpack(found, jwt_pb2.PerRouteConfig())
    result = jwt.evaluate(config, per_route, ctx.request, ctx.prepared.query, ctx.now)
    ctx.payloads.update(result.payloads)
    if result.denial is not None:
        denial = result.denial
        verdict = f"responds {denial.status} {denial.body}"
        step = FilterStep(
            name=http_filter.name,
            kind="jwt_authn",
            summary=result.summary,
            details=result.details,
            verdict=verdict,
        )
        return step, Stop("jwt_authn", denial.status, denial.body, reason=denial.body)
    details = list(result.details)
    for key, payload in result.payloads.items():
        provider = next(
            (p for p in config.providers.values() if p.payload_in_metadata == key), None
        )
        if provider is None:
            continue
        for claim in provider.claim_to_headers:
            value = payload.get(claim.claim_name)
            if value is not None:
                ctx.claim_headers.append((claim.header_name.lower(), str(value)))
                details.append(f"sets {claim.header_name}: {value} (claim {claim.claim_name})")
        ctx.reselect |= provider.clear_route_cache and bool(provider.claim_to_headers)
    return FilterStep(
        name=http_filter.name, kind="jwt_authn", summary=result.summary, details=tuple(details)
    ), None


def _rbac(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    per_route = unpack(found, rbac_filter_pb2.RBACPerRoute())
    if per_route is None:
        listener = rbac_filter_pb2.RBAC()
        http_filter.typed_config.Unpack(listener)
        if listener.HasField("rules"):
            per_route = rbac_filter_pb2.RBACPerRoute(rbac=listener)
    result = rbac.evaluate(per_route, ctx.request, ctx.prepared.path, ctx.payloads)
    verdict = f"responds 403 {rbac.DENIED}" if result.denied else "passes"
    step = FilterStep(
        name=http_filter.name,
        kind="rbac",
        summary=result.summary,
        details=result.details,
        verdict=verdict,
    )
    return step, Stop("rbac", 403, rbac.DENIED, reason=rbac.DENIED) if result.denied else None


def _ext_authz(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = ext_authz_pb2.ExtAuthz()
    http_filter.typed_config.Unpack(config)
    per_route = unpack(found, ext_authz_pb2.ExtAuthzPerRoute())
    name = http_filter.name
    if per_route is not None and per_route.disabled:
        return FilterStep(name=name, kind="ext_authz", summary="turned off on this route"), None
    context = dict(per_route.check_settings.context_extensions) if per_route else {}
    config_id = context.get("config_id", "(none)")
    server = config.grpc_service.envoy_grpc.cluster_name
    timeout = config.grpc_service.timeout.ToMilliseconds()
    summary = f"asks the extauth server ({server}, {timeout} ms) with AuthConfig {config_id}"
    if server == EXTAUTH_SERVER_MISSING:
        status = config.status_on_error.code or 403
        step = FilterStep(
            name=name,
            kind="ext_authz",
            summary=summary,
            details=("no extauth server is configured (Settings extauth): every check fails",),
            verdict=f"responds {status}",
        )
        return step, Stop("ext_authz", status, "", reason="no extauth server")
    step = FilterStep(
        name=name,
        kind="ext_authz",
        summary=summary,
        details=(
            "the server decides: an OIDC login redirects a browser without a session to the "
            "identity provider; a valid session goes on",
        ),
        verdict="asks the extauth server",
    )
    return step, Stop("ext_authz", None, reason=f"AuthConfig {config_id}")


def _local_ratelimit(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = route_or_listener(found, http_filter, local_pb2.LocalRateLimit())
    summary, details, verdict = ratelimits.describe_local(config)
    step = FilterStep(
        name=http_filter.name,
        kind="local_ratelimit",
        summary=summary,
        details=details,
        verdict=verdict,
    )
    if verdict.startswith("responds"):
        return step, Stop("local_ratelimit", 429, "local_rate_limited")
    return step, None


def _ratelimit(http_filter: hcm_pb2.HttpFilter, found: Any, ctx: Context) -> Result:
    config = rate_limit_pb2.RateLimit()
    http_filter.typed_config.Unpack(config)
    per_route = unpack(found, rate_limit_pb2.RateLimitPerRoute())
    if ctx.route is None or ctx.vhost is None:
        return FilterStep(
            name=http_filter.name, kind="ratelimit", summary="no route: nothing to count"
        ), None
    summary, details, verdict = ratelimits.describe_global(
        config, per_route, ctx.route, ctx.vhost, ctx.request
    )
    return FilterStep(
        name=http_filter.name, kind="ratelimit", summary=summary, details=details, verdict=verdict
    ), None


ROUTER = "envoy.extensions.filters.http.router.v3.Router"
_HTTP = "envoy.extensions.filters.http."
#: Filter config type → (the short name explain shows, what it does with a request).
_HANDLERS: Mapping[str, tuple[str, Callable[[hcm_pb2.HttpFilter, Any, Context], Result]]] = {
    _HTTP + "jwt_authn.v3.JwtAuthentication": ("jwt_authn", _jwt),
    _HTTP + "rbac.v3.RBAC": ("rbac", _rbac),
    _HTTP + "ext_authz.v3.ExtAuthz": ("ext_authz", _ext_authz),
    _HTTP + "cors.v3.Cors": ("cors", headers.cors),
    _HTTP + "local_ratelimit.v3.LocalRateLimit": ("local_ratelimit", _local_ratelimit),
    _HTTP + "ratelimit.v3.RateLimit": ("ratelimit", _ratelimit),
    _HTTP + "header_to_metadata.v3.Config": ("transformation", headers.extract),
    _HTTP + "header_mutation.v3.HeaderMutation": ("transformation", headers.mutate),
    _HTTP + "lua.v3.Lua": ("transformation", headers.lua),
    _HTTP + "aws_lambda.v3.Config": (aws.KIND, aws.aws_lambda),
    _HTTP + "fault.v3.HTTPFault": ("fault", traffic.fault),
    _HTTP + "ext_proc.v3.ExternalProcessor": ("ext_proc", traffic.ext_proc),
    _HTTP + "csrf.v3.CsrfPolicy": ("csrf", traffic.csrf),
    _HTTP + "buffer.v3.Buffer": ("buffer", traffic.buffer),
    _HTTP + "dynamic_forward_proxy.v3.FilterConfig": (
        "dynamic_forward_proxy",
        traffic.dynamic_forward_proxy,
    ),
}
