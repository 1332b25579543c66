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
