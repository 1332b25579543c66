"""`Cached`: a document of the identity provider (its discovery document, its key set),
fetched on demand and kept for a while.

A fetch runs as one shared task, shielded from the request that started it: when Envoy
gives up on a slow check (`requestTimeout`), the fetch still completes and the next request
finds it cached. When a refresh fails (the fetch raises one of `failures`), the last good
copy keeps serving, and the fetch is tried again `RETRY_AFTER_FAILURE` seconds later.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

RETRY_AFTER_FAILURE = 5.0  # seconds before a failed fetch is tried again
T = TypeVar("T")


class Cached(Generic[T]):
    """A value fetched on demand, kept for `ttl` seconds, fetched by one shared task."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[T]],
        ttl: float,
        failures: tuple[type[Exception], ...],
    ) -> None:
        self._fetch = fetch
        self._failures = failures
        self.ttl = ttl
        self.value: T | None = None
        self.fetched_at = 0.0
        self._retry_at = 0.0
        self._task: asyncio.Future[T] | None = None

    async def get(self, *, force: bool = False) -> T:
        now = time.monotonic()
        fresh = self.value is not None and now - self.fetched_at < self.ttl
        if fresh and not force:
            assert self.value is not None
            return self.value
        if self.value is not None and now < self._retry_at:
            return self.value  # the last refresh failed: serve the old copy a little longer
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())
        return await asyncio.shield(self._task)

    async def _run(self) -> T:
        try:
            value = await self._fetch()
        except self._failures:
            self._retry_at = time.monotonic() + RETRY_AFTER_FAILURE
            if self.value is None:
                raise
            log.warning("extauth: refresh failed; serving the cached copy", exc_info=True)
            return self.value
        finally:
            self._task = None
        self.value, self.fetched_at = value, time.monotonic()
        return value
