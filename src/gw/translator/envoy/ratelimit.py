"""Rate limits → two Envoy filters: `local_ratelimit` (token buckets in Envoy) and
`ratelimit` (descriptors checked by the rate-limit server over gRPC).

Both are on a listener only when one of its hosts uses them, and both carry their limits
per host and per route (`typed_per_filter_config`; the most specific wins), so that hosts
without limits never pay for them. The listener-level `local_ratelimit` has no bucket of
its own: it limits nothing until a host or route gives it one. `ratelimit` sits after
authorization and the regular transformation (REFERENCE.md Appendix A), or before
authentication when Settings say `rateLimitBeforeAuth`; `rateLimitEarlyConfigs` and
`rateLimitRegularConfigs` always go to the early and the regular one. `HTTP_FILTERS` holds
one instance for each place (the early one named `gw.ratelimit.early`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from envoy.config.core.v3 import base_pb2, config_source_pb2, grpc_service_pb2
from envoy.config.ratelimit.v3 import rls_pb2 as rls_config_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.common.ratelimit.v3 import ratelimit_pb2 as common_pb2
from envoy.extensions.filters.http.local_ratelimit.v3 import local_rate_limit_pb2 as local_pb2
from envoy.extensions.filters.http.ratelimit.v3 import rate_limit_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from envoy.type.v3 import percent_pb2, token_bucket_pb2
from google.protobuf import duration_pb2, wrappers_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack
from gw.translator.envoy.ratelimit_basic import basic_differs, basic_policies
from gw.wire.ratelimit import DOMAIN

LOCAL_STAT_PREFIX = "local_rate_limit"
_DRAFT_03 = common_pb2.XRateLimitHeadersRFCVersion.DRAFT_VERSION_03
_ALWAYS = config_source_pb2.V3


def _duration(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def _x_headers(vhost: ir.VirtualHost) -> bool:
    return vhost.ratelimit_server is not None and vhost.ratelimit_server.x_ratelimit_headers


class LocalRateLimitFilter:
    name = names.LOCAL_RATELIMIT

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        if not any(v.uses_local_ratelimit for v in vhosts):
            return None
        config = local_pb2.LocalRateLimit(stat_prefix=LOCAL_STAT_PREFIX)
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        """With the Gateway's `httpLocalRatelimit.defaultLimit`, the listener's filter holds
        that bucket: every request not limited by a host's or route's own bucket takes it."""
        own = listener.plugins.local_ratelimit
        if own is None or own.bucket is None:
            return self.listener_filter(vhosts)
        config = build_local(own.bucket, x_headers=own.x_ratelimit_headers)
        config.local_rate_limit_per_downstream_connection = own.per_connection
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        if vhost.ratelimit is None or vhost.ratelimit.local is None:
            return None
        out: Message = build_local(vhost.ratelimit.local, x_headers=_x_headers(vhost))
        return out

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        if route.ratelimit is None or route.ratelimit.local is None:
            return None
        out: Message = build_local(route.ratelimit.local, x_headers=_x_headers(vhost))
        return out

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_local(limit: ir.LocalLimit, *, x_headers: bool) -> local_pb2.LocalRateLimit:
    """One bucket (each per-route config is its own), enforced on every request."""
    everyone = base_pb2.RuntimeFractionalPercent(
        default_value=percent_pb2.FractionalPercent(
            numerator=100, denominator=percent_pb2.FractionalPercent.HUNDRED
        )
    )
    out = local_pb2.LocalRateLimit(
        stat_prefix=LOCAL_STAT_PREFIX,
        token_bucket=token_bucket(limit),
        filter_enabled=everyone,
        filter_enforced=everyone,
    )
    if x_headers:
        out.enable_x_ratelimit_headers = _DRAFT_03
    return out


def token_bucket(limit: ir.LocalLimit) -> token_bucket_pb2.TokenBucket:
    """Envoy's bucket for `limit` (also the TCP gateways' bucket of connections)."""
    return token_bucket_pb2.TokenBucket(
        max_tokens=limit.max_tokens,
        tokens_per_fill=wrappers_pb2.UInt32Value(value=limit.tokens_per_fill),
        fill_interval=_duration(limit.fill_interval_ms),
    )


class GlobalRateLimitFilter:
    """One of the two ratelimit filters: `early` (before authentication: the hosts' and
    routes' `rateLimitEarlyConfigs`, and their `rateLimitConfigs` when Settings say
    `rateLimitBeforeAuth`) or `regular` (after authorization: `rateLimitRegularConfigs`, and
    `rateLimitConfigs` otherwise)."""

    def __init__(self, stage: Literal["early", "regular"]) -> None:
        self.stage = stage
        self.name = names.RATELIMIT_EARLY if stage == "early" else names.RATELIMIT

    def _policies(
        self, vhost: ir.VirtualHost, limits: ir.RateLimits | None, route: ir.Route | None = None
    ) -> tuple[ir.Policy, ...]:
        """This filter's policies of `limits` (a host's, or a route's, then `route`)."""
        if limits is None:
            return ()
        server = vhost.ratelimit_server
        before_auth = server is not None and server.before_auth
        if self.stage == "early":
            return limits.early + (limits.policies if before_auth else ())
        basic = basic_policies(vhost, limits.basic, route) if limits.basic else ()
        return limits.regular + (() if before_auth else limits.policies) + basic

    def _used(self, vhost: ir.VirtualHost) -> bool:
        if not vhost.uses_global_ratelimit:
            return False
        return any(
            self._policies(vhost, r)
            for r in (vhost.ratelimit, *(r.ratelimit for r in vhost.routes))
        )

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        return self._filter(vhosts, None)

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        """A Gateway's own `ratelimitServer` replaces the Settings' on its listener."""
        return self._filter(vhosts, listener.plugins.ratelimit_server)

    def _filter(
        self, vhosts: Sequence[ir.VirtualHost], own: ir.RateLimitServer | None
    ) -> hcm_pb2.HttpFilter | None:
        users = [v for v in vhosts if self._used(v)]
        if not users:
            return None
        servers = sorted(
            {v.ratelimit_server for v in users if v.ratelimit_server is not None},
            key=lambda s: s.cluster or "",
        )
        config = build_global(own or (servers[0] if servers else None))
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config))

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        policies = self._policies(vhost, vhost.ratelimit)
        if not policies:
            return None
        out: Message = _per_route(policies)
        return out

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        own = route.ratelimit
        differs = self.stage == "regular" and basic_differs(vhost, route)
        if not self._policies(vhost, own, route) and not differs:
            return None  # nothing of the route's own for this filter: the host's applies
        limits = _inherit(vhost.ratelimit, own) if own is not None else vhost.ratelimit
        policies = self._policies(vhost, limits, route)
        if not policies:
            return None
        out: Message = _per_route(policies)
        return out

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def _inherit(host: ir.RateLimits | None, route: ir.RateLimits) -> ir.RateLimits:
    """A route's limits place by place: each place the route does not set is its host's (a
    route's per-filter config replaces the host's whole, so the host's part is repeated
    there), and a place in the route's `include_host` gets the host's after the route's."""
    if host is None:
        return route

    def place(name: Literal["policies", "early", "regular"]) -> tuple[ir.Policy, ...]:
        mine, theirs = getattr(route, name), getattr(host, name)
        if not mine:
            return tuple(theirs)
        return tuple(mine) + (tuple(theirs) if name in route.include_host else ())

    return ir.RateLimits(
        policies=place("policies"),
        early=place("early"),
        regular=place("regular"),
        basic=route.basic or host.basic,
    )


def build_global(server: ir.RateLimitServer | None) -> rate_limit_pb2.RateLimit:
    """The listener's ratelimit filter. Without a server (a rejected host's last accepted
    version still served after Settings lost it) it calls a cluster that does not exist
    and denies: a limit is never silently lifted."""
    out = rate_limit_pb2.RateLimit(
        domain=DOMAIN,
        timeout=_duration(server.timeout_ms if server else 100),
        failure_mode_deny=server.deny_on_fail if server else True,
        rate_limit_service=rls_config_pb2.RateLimitServiceConfig(
            grpc_service=grpc_service_pb2.GrpcService(
                envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
                    cluster_name=(server.cluster if server else None)
                    or names.RATELIMIT_SERVER_MISSING,
                    authority=server.authority if server else "",
                )
            ),
            transport_api_version=_ALWAYS,
        ),
    )
    if server is not None and server.x_ratelimit_headers:
        out.enable_x_ratelimit_headers = _DRAFT_03
    return out


def _per_route(policies: Sequence[ir.Policy]) -> rate_limit_pb2.RateLimitPerRoute:
    out: rate_limit_pb2.RateLimitPerRoute = rate_limit_pb2.RateLimitPerRoute(
        rate_limits=[rc_pb2.RateLimit(actions=[_action(a) for a in p.actions]) for p in policies]
    )
    return out


def _action(action: ir.Action) -> rc_pb2.RateLimit.Action:
    a = rc_pb2.RateLimit.Action
    if action.kind == "generic_key":
        return a(
            generic_key=a.GenericKey(
                descriptor_key=action.descriptor_key, descriptor_value=action.descriptor_value
            )
        )
    if action.kind == "request_headers":
        return a(
            request_headers=a.RequestHeaders(
                header_name=action.header_name,
                descriptor_key=action.descriptor_key,
                skip_if_absent=action.skip_if_absent,
            )
        )
    if action.kind == "remote_address":
        return a(remote_address=a.RemoteAddress())
    if action.kind == "destination_cluster":
        return a(destination_cluster=a.DestinationCluster())
    return a(
        header_value_match=a.HeaderValueMatch(
            descriptor_key=action.descriptor_key,
            descriptor_value=action.descriptor_value,
            expect_match=wrappers_pb2.BoolValue(value=action.expect_match),
            headers=[_header(h) for h in action.headers],
        )
    )


def _header(condition: ir.HeaderCondition) -> rc_pb2.HeaderMatcher:
    out = rc_pb2.HeaderMatcher(name=condition.name, invert_match=condition.invert)
    if condition.kind == "present":
        out.present_match = True
    elif condition.kind == "regex":
        out.string_match.CopyFrom(
            string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex=condition.value))
        )
    else:
        out.string_match.CopyFrom(string_pb2.StringMatcher(**{condition.kind: condition.value}))
    return out
