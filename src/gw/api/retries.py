"""`retries` on virtual hosts and routes: the established RetryPolicy fields."""

from __future__ import annotations

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model


class RetryBackOff(Model):
    base_interval: Duration | None = None
    max_interval: Duration | None = None


class RetryPolicy(Model):
    retry_on: str | None = None
    num_retries: int | None = Field(default=None, ge=0)
    per_try_timeout: Duration | None = None
    retry_back_off: RetryBackOff | None = None
    retriable_status_codes: list[int] = []
