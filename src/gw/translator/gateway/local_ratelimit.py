"""A Gateway's own token buckets: `httpGateway.options.httpLocalRatelimit` (requests, in
Envoy's HTTP local rate limit filter, before authentication) and `networkLocalRatelimit`
(connections, in Envoy's network local rate limit filter, before any HTTP is read).

A bucket is the established `TokenBucket`: `maxTokens` (at least 1), `tokensPerFill`
(default 1) every `fillInterval` (default 1s, at least 50ms), checked as a virtual host's
`localRatelimit` is (`ratelimit.local_limit`). The gateway-wide request bucket is shared by
every request on the listener that no virtual host or route limits with a bucket of its own.
"""

from __future__ import annotations

from gw.api.http_listener_options import LocalRatelimitSettings, TokenBucket
from gw.api.ratelimit import LocalRateLimit
from gw.translator import ir
from gw.translator.gateway.ratelimit import local_limit
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options"


def build_connection_ratelimit(bucket: TokenBucket, report: ResourceReport) -> ir.LocalLimit | None:
    """`networkLocalRatelimit`: new connections beyond the bucket are closed at once."""
    return _bucket(bucket, f"{FIELD}.networkLocalRatelimit", report)


def build_listener_ratelimit(
    settings: LocalRatelimitSettings, report: ResourceReport
) -> ir.ListenerLocalRateLimit | None:
    """`httpLocalRatelimit`, or None after reporting errors."""
    field = f"{FIELD}.httpLocalRatelimit"
    bucket = None
    if settings.default_limit is not None:
        bucket = _bucket(settings.default_limit, f"{field}.defaultLimit", report)
        if bucket is None:
            return None
    else:
        for name, value in (
            (
                "localRateLimitPerDownstreamConnection",
                settings.local_rate_limit_per_downstream_connection,
            ),
            ("enableXRatelimitHeaders", settings.enable_x_ratelimit_headers),
        ):
            if value:
                report.warning(
                    f"{field}.{name}",
                    "no effect: it shapes the gateway-wide bucket, and defaultLimit sets none "
                    "(virtual hosts and routes keep their own buckets' settings)",
                )
    return ir.ListenerLocalRateLimit(
        bucket=bucket,
        per_connection=bool(settings.local_rate_limit_per_downstream_connection),
        x_ratelimit_headers=bool(settings.enable_x_ratelimit_headers),
    )


def _bucket(bucket: TokenBucket, field: str, report: ResourceReport) -> ir.LocalLimit | None:
    return local_limit(
        LocalRateLimit(
            max_tokens=bucket.max_tokens,
            tokens_per_fill=bucket.tokens_per_fill,
            fill_interval=bucket.fill_interval or "1s",
        ),
        field,
        report,
    )
