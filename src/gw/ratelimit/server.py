"""The rate-limit server process: `envoy.service.ratelimit.v3.RateLimitService/
ShouldRateLimit` over grpc.aio, configured over xDS, counting in Redis.

Failures are answered with a gRPC error (UNAVAILABLE), never with "OK": Envoy then applies
Settings `denyOnFail` (deny with 500, or let the request through). That covers Redis being
down (logged once when it goes, once when it is back: the client reconnects by itself) and
a server that has not received its configuration yet.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import grpc
from envoy.service.ratelimit.v3 import rls_pb2, rls_pb2_grpc
from google.protobuf import any_pb2, duration_pb2
from redis.exceptions import RedisError

from gw import defaults
from gw.ratelimit.config import TYPE_URL, parse_resources
from gw.ratelimit.counter import RedisCounter, Window, split_address, window
from gw.ratelimit.limits import Limits, Match
from gw.wire.ratelimit import DOMAIN
from gw.xds.component import ComponentServer, Placement

log = logging.getLogger(__name__)

_Response = rls_pb2.RateLimitResponse
_OK = _Response.Code.OK
_OVER = _Response.Code.OVER_LIMIT


class Registry:
    """The limits in force; None until the first configuration arrives."""

    def __init__(self) -> None:
        self.limits: Limits | None = None

    def apply(self, resources: Sequence[any_pb2.Any]) -> None:
        """Install the configs of an xDS response (raises ValueError: NACK, nothing kept)."""
        configs = parse_resources(resources)
        self.limits = Limits(configs)
        log.info("ratelimit: serving %d configs: %s", len(configs), ", ".join(sorted(configs)))


class RateLimitService(rls_pb2_grpc.RateLimitServiceServicer):  # type: ignore[misc]
    def __init__(
        self, registry: Registry, counter: RedisCounter, clock: Callable[[], float] = time.time
    ) -> None:
        self.registry = registry
        self.counter = counter
        self.clock = clock
        self.redis_down = False

    async def ShouldRateLimit(  # noqa: N802 (gRPC method name)
        self, request: rls_pb2.RateLimitRequest, context: Any
    ) -> rls_pb2.RateLimitResponse:
        limits = self.registry.limits
        if limits is None:
            log.warning("ratelimit: no configuration received yet; answering UNAVAILABLE")
            await context.abort(grpc.StatusCode.UNAVAILABLE, "no configuration received yet")
        assert limits is not None
        descriptors = [[(e.key, e.value) for e in d.entries] for d in request.descriptors]
        matches = limits.matches(descriptors) if request.domain == DOMAIN else []
        now = self.clock()
        counted = [(m, window(request.domain, m.counter, m.rule.limit.unit, now)) for m in matches]
        hits = [(win, _hits(request, m.index)) for m, win in counted]
        try:
            counts = await self.counter.hit(hits)
        except (RedisError, OSError) as exc:
            if not self.redis_down:
                log.error("ratelimit: redis at %s is unreachable: %s", self.counter.address, exc)
            self.redis_down = True
            await context.abort(grpc.StatusCode.UNAVAILABLE, "rate limit counters unavailable")
        if self.redis_down:
            log.warning("ratelimit: redis at %s is back", self.counter.address)
            self.redis_down = False
        return _response(len(descriptors), counted, counts, now)


def _hits(request: rls_pb2.RateLimitRequest, index: int) -> int:
    descriptor = request.descriptors[index]
    if descriptor.HasField("hits_addend"):
        return int(descriptor.hits_addend.value)
    return int(request.hits_addend) or 1


def _response(
    size: int, counted: Sequence[tuple[Match, Window]], counts: Sequence[int], now: float
) -> rls_pb2.RateLimitResponse:
    """One status per descriptor: of several limits counting for one, the one over (or, if
    none is, the one with the fewest requests left) speaks for it."""
    statuses: list[Any] = [_Response.DescriptorStatus(code=_OK) for _ in range(size)]
    remaining: dict[int, int] = {}
    overall = _OK
    for (match, win), count in zip(counted, counts, strict=True):
        allowed = match.rule.limit.requests_per_unit
        code = _OVER if count > allowed else _OK
        left = max(0, allowed - count)
        shown = statuses[match.index]
        if match.index in remaining and (
            shown.code == _OVER or (code == _OK and left >= remaining[match.index])
        ):
            continue
        overall = _OVER if code == _OVER else overall
        remaining[match.index] = left
        reset = max(1, win.start + win.seconds - int(now))
        statuses[match.index] = _Response.DescriptorStatus(
            code=code,
            current_limit=_Response.RateLimit(
                requests_per_unit=allowed,
                unit=_Response.RateLimit.Unit.Value(match.rule.limit.unit),
            ),
            limit_remaining=left,
            duration_until_reset=duration_pb2.Duration(seconds=reset),
        )
    return _Response(overall_code=overall, statuses=statuses)


def ratelimit_server(placement: Placement, redis: str = defaults.REDIS) -> ComponentServer:
    """The rate-limit server where `placement` says, counting in Redis at `redis` (a
    `gw.lifecycle.Server`: nothing listens before `start()`); ValueError when `redis` is
    not host:port."""
    registry = Registry()
    counter = RedisCounter(*split_address(redis))
    service = RateLimitService(registry, counter)
    add = partial(rls_pb2_grpc.add_RateLimitServiceServicer_to_server, service)
    log.info("ratelimit: counting in redis at %s", redis)
    return ComponentServer("ratelimit", placement, TYPE_URL, registry.apply, add, counter.close)
