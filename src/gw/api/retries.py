"""`retries` on virtual hosts and routes: the established RetryPolicy fields."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model


class RetryBackOff(Model):
    base_interval: Duration | None = None
    max_interval: Duration | None = None


class ResetHeader(Model):
    name: str
    format: Literal["SECONDS", "UNIX_TIMESTAMP"] = "SECONDS"


class RateLimitedRetryBackOff(Model):
    """Back-off for rate-limited answers, read from their headers (`Retry-After`, ...)."""

    reset_headers: list[ResetHeader] = []
    max_interval: Duration | None = None


class PreviousPriorities(Model):
    update_frequency: int | None = Field(default=None, ge=0)


class RetryPolicy(Model):
    retry_on: str | None = None
    num_retries: int | None = Field(default=None, ge=0)
    per_try_timeout: Duration | None = None
    retry_back_off: RetryBackOff | None = None
    retriable_status_codes: list[int] = []
    rate_limited_retry_back_off: RateLimitedRetryBackOff | None = None
    previous_priorities: PreviousPriorities | None = None
