"""`retries` (virtual host or route) → `ir.RetryPolicy`, checked as the established gateway
checks it: a back-off needs a base interval of at least 1ms, not above the max interval."""

from __future__ import annotations

from gw.api.duration import duration_ms
from gw.api.retries import RetryPolicy
from gw.translator import ir
from gw.translator.reports import ResourceReport


def build_retries(
    policy: RetryPolicy | None, field: str, report: ResourceReport
) -> ir.RetryPolicy | None:
    if policy is None:
        return None
    base_ms = max_ms = None
    back_off = policy.retry_back_off
    if back_off is not None:
        if back_off.base_interval is None:
            message = (
                "max interval was defined, but the base interval was not"
                if back_off.max_interval is not None
                else "base interval is required: set retryBackOff.baseInterval (at least 1ms)"
            )
            report.error(f"{field}.retryBackOff", message)
            return None
        base_ms = int(duration_ms(back_off.base_interval))
        if base_ms < 1:
            report.error(
                f"{field}.retryBackOff.baseInterval",
                f"base interval: {back_off.base_interval} must be at least 1ms",
            )
            return None
        if back_off.max_interval is not None:
            max_ms = int(duration_ms(back_off.max_interval))
            if base_ms > max_ms:
                report.error(
                    f"{field}.retryBackOff",
                    f"base interval: {back_off.base_interval} is > max interval: "
                    f"{back_off.max_interval}",
                )
                return None
    for i, code in enumerate(policy.retriable_status_codes):
        if not 100 <= code <= 599:
            report.error(f"{field}.retriableStatusCodes[{i}]", f"{code} is not an HTTP status code")
            return None
    rate_limited = policy.rate_limited_retry_back_off
    if rate_limited is not None and not rate_limited.reset_headers:
        report.error(
            f"{field}.rateLimitedRetryBackOff.resetHeaders",
            "name at least one header to read the back-off from (Retry-After, X-RateLimit-Reset)",
        )
        return None
    priorities = policy.previous_priorities
    return ir.RetryPolicy(
        retry_on=policy.retry_on or "",
        num_retries=policy.num_retries,
        per_try_timeout_ms=(
            int(duration_ms(policy.per_try_timeout)) if policy.per_try_timeout else None
        ),
        base_interval_ms=base_ms,
        max_interval_ms=max_ms,
        retriable_status_codes=tuple(policy.retriable_status_codes),
        reset_headers=tuple(
            (h.name, h.format) for h in (rate_limited.reset_headers if rate_limited else ())
        ),
        rate_limited_max_interval_ms=(
            int(duration_ms(rate_limited.max_interval))
            if rate_limited and rate_limited.max_interval
            else None
        ),
        # Unset or 0: every attempt (the established gateway's default, 1).
        previous_priorities_update_frequency=(
            (priorities.update_frequency or 1) if priorities is not None else None
        ),
    )
