"""Retry policies of virtual hosts and routes, as Envoy runs them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Envoy's retry policy; None fields keep Envoy's defaults."""

    retry_on: str = ""
    num_retries: int | None = None
    per_try_timeout_ms: int | None = None
    base_interval_ms: int | None = None
    max_interval_ms: int | None = None
    retriable_status_codes: tuple[int, ...] = ()
    #: Rate-limited answers: (header name, `SECONDS` or `UNIX_TIMESTAMP`) to read the
    #: back-off from, in order, and the longest back-off taken from them.
    reset_headers: tuple[tuple[str, str], ...] = ()
    rate_limited_max_interval_ms: int | None = None
    #: Retries avoid the priorities already tried, recomputed every this many attempts.
    previous_priorities_update_frequency: int | None = None
