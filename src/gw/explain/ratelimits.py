"""Rate limits as Envoy applies them to one request: the local token bucket of the route (or
virtual host), and the descriptors the `ratelimit` filter sends the rate-limit server.

A descriptor is built from its actions in order; an action that cannot produce its entry
(a header that is absent, a header condition that does not hold) drops the whole descriptor,
unless it is a `request_headers` action with `skip_if_absent` (then only its entry goes).
Whether a request is over a limit depends on counters explain cannot see: it says what is
counted and what answers when the limit is reached (429).
"""

from __future__ import annotations

from collections.abc import Sequence

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.filters.http.local_ratelimit.v3 import local_rate_limit_pb2 as local_pb2
from envoy.extensions.filters.http.ratelimit.v3 import rate_limit_pb2

from gw.explain.matching import header_check
from gw.explain.request import Request


def describe_local(config: local_pb2.LocalRateLimit) -> tuple[str, tuple[str, ...], str]:
    """(summary, details, verdict) of a route's token bucket."""
    bucket = config.token_bucket
    if not config.HasField("token_bucket"):
        return "no bucket on this route: nothing is limited", (), "passes"
    per_fill = bucket.tokens_per_fill.value if bucket.HasField("tokens_per_fill") else 1
    every = bucket.fill_interval.seconds + bucket.fill_interval.nanos / 1e9
    summary = (
        f"a bucket of {bucket.max_tokens} requests, refilled with {per_fill} every {every:g}s; "
        "when it is empty Envoy answers 429 local_rate_limited"
    )
    enforced = config.filter_enforced.default_value
    if config.HasField("filter_enforced") and enforced.numerator == 0:
        return summary, ("counted, not enforced",), "passes"
    if bucket.max_tokens == 0:
        return summary, (), "responds 429 local_rate_limited"
    return summary, (), "passes while the bucket holds a token"


def descriptors(
    limits: Sequence[rc_pb2.RateLimit], request: Request, cluster: str | None
) -> tuple[list[list[tuple[str, str]]], list[str]]:
    """The descriptors sent for `limits`, and a note for each one dropped."""
    sent, dropped = [], []
    for index, limit in enumerate(limits):
        entries: list[tuple[str, str]] = []
        reason = None
        for action in limit.actions:
            entry, reason = _entry(action, request, cluster)
            if reason is not None:
                break
            if entry is not None:
                entries.append(entry)
        if reason is not None:
            dropped.append(f"descriptor {index + 1} is not sent: {reason}")
        elif entries:
            sent.append(entries)
    return sent, dropped


def _entry(
    action: rc_pb2.RateLimit.Action, request: Request, cluster: str | None
) -> tuple[tuple[str, str] | None, str | None]:
    kind = action.WhichOneof("action_specifier")
    if kind == "generic_key":
        key = action.generic_key.descriptor_key or "generic_key"
        return (key, action.generic_key.descriptor_value), None
    if kind == "request_headers":
        spec = action.request_headers
        values = request.values(spec.header_name)
        if not values:
            if spec.skip_if_absent:
                return None, None
            return None, f"the request has no {spec.header_name} header"
        return (spec.descriptor_key, values[0]), None
    if kind == "remote_address":
        return ("remote_address", request.source_ip), None
    if kind == "destination_cluster":
        return ("destination_cluster", cluster or ""), None
    if kind == "header_value_match":
        spec = action.header_value_match
        matched = all(header_check(h, request).ok for h in spec.headers)
        expected = spec.expect_match.value if spec.HasField("expect_match") else True
        if matched != expected:
            return None, "its header condition does not hold"
        return (spec.descriptor_key or "header_match", spec.descriptor_value), None
    return None, f"{kind}: explain does not evaluate it (gw sets none)"


def describe_global(
    config: rate_limit_pb2.RateLimit,
    per_route: rate_limit_pb2.RateLimitPerRoute | None,
    route: rc_pb2.Route,
    vhost: rc_pb2.VirtualHost,
    request: Request,
) -> tuple[str, tuple[str, ...], str]:
    """(summary, details, verdict) of a `ratelimit` filter for this request."""
    limits = list(per_route.rate_limits) if per_route is not None else []
    if not limits:
        limits = list(route.route.rate_limits) or list(vhost.rate_limits)
    if not limits:
        return "no limits on this route", (), "passes"
    cluster = route.route.cluster if route.HasField("route") else None
    sent, dropped = descriptors(limits, request, cluster)
    domain = config.domain or "(no domain)"
    details = [
        "descriptor " + ", ".join(f"{k}={v}" for k, v in entries) for entries in sent
    ] + dropped
    if not sent:
        return f"domain {domain}: no descriptor applies", tuple(details), "passes"
    server = config.rate_limit_service.grpc_service.envoy_grpc.cluster_name
    mode = "denies (failure_mode_deny)" if config.failure_mode_deny else "lets requests through"
    summary = (
        f"asks the rate-limit server ({server}) about {len(sent)} descriptor(s) in domain "
        f"{domain}; 429 when one is over its limit; if the server fails, Envoy {mode}"
    )
    return summary, tuple(details), "passes unless a limit is reached"
