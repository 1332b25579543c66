"""`ShouldRateLimit` over real gRPC, counting in a real Redis (tests/support/redis_server.py):
fixed windows, one counter per descriptor value, the limit info Envoy turns into
x-ratelimit headers, and UNAVAILABLE (never OK) while Redis is down. The clock is the
test's, so that windows can be crossed without waiting."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from envoy.extensions.common.ratelimit.v3 import ratelimit_pb2 as common_pb2
from envoy.service.ratelimit.v3 import rls_pb2, rls_pb2_grpc

from gw.ratelimit.counter import KEY_PREFIX, RedisCounter, redis_problem
from gw.ratelimit.limits import Limits
from gw.ratelimit.server import RateLimitService, Registry
from gw.wire.ratelimit import (
    CONFIG_KEY,
    DOMAIN,
    SET_CONFIG_KEY,
    Descriptor,
    Limit,
    RateLimitConfig,
    SetDescriptor,
    SimpleDescriptor,
)
from tests.support.ports import free_port
from tests.support.redis_server import RedisServer

OK = rls_pb2.RateLimitResponse.Code.OK
OVER = rls_pb2.RateLimitResponse.Code.OVER_LIMIT
START = 1_780_272_000.0  # a whole hour


#: Set rules (Settings `ratelimit.setDescriptors`): `type: a` once a minute, and every
#: set-style request five times an hour (alwaysApply: it counts even after a match).
SETTINGS = RateLimitConfig(
    config_id="gw:settings",
    namespace="gw-system",
    name="default",
    descriptors=(),
    set_descriptors=(
        SetDescriptor(
            simple_descriptors=(SimpleDescriptor(key="type", value="a"),),
            limit=Limit(unit="MINUTE", requests_per_unit=1),
        ),
        SetDescriptor(limit=Limit(unit="HOUR", requests_per_unit=5), always_apply=True),
    ),
)


class Clock:
    def __init__(self) -> None:
        self.now = START + 10

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
async def service(
    redis: RedisServer,
) -> AsyncIterator[tuple[rls_pb2_grpc.RateLimitServiceStub, Clock, RedisServer]]:
    redis.client().flushall()
    registry = Registry()
    registry.limits = Limits(
        {
            "ns.a": RateLimitConfig(
                config_id="ns.a",
                namespace="ns",
                name="a",
                descriptors=(
                    Descriptor(key="client", limit=Limit(unit="MINUTE", requests_per_unit=2)),
                ),
            ),
            "gw:settings": SETTINGS,
        }
    )
    clock = Clock()
    host, port = redis.address.split(":")
    counter = RedisCounter(host, int(port))
    server = grpc.aio.server()
    rls_pb2_grpc.add_RateLimitServiceServicer_to_server(
        RateLimitService(registry, counter, clock), server
    )
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        yield rls_pb2_grpc.RateLimitServiceStub(channel), clock, redis
    await server.stop(grace=0)
    await counter.close()


def request(*clients: str) -> rls_pb2.RateLimitRequest:
    return rls_pb2.RateLimitRequest(
        domain=DOMAIN,
        descriptors=[
            common_pb2.RateLimitDescriptor(
                entries=[
                    common_pb2.RateLimitDescriptor.Entry(key=CONFIG_KEY, value="ns.a"),
                    common_pb2.RateLimitDescriptor.Entry(key="client", value=c),
                ]
            )
            for c in clients
        ],
    )


async def test_counts_in_fixed_windows(
    service: tuple[rls_pb2_grpc.RateLimitServiceStub, Clock, RedisServer],
) -> None:
    stub, clock, redis = service
    answers = [await stub.ShouldRateLimit(request("x")) for _ in range(3)]
    assert [a.overall_code for a in answers] == [OK, OK, OVER]
    assert [a.statuses[0].limit_remaining for a in answers] == [1, 0, 0]
    status = answers[2].statuses[0]
    assert status.current_limit.requests_per_unit == 2
    assert status.current_limit.unit == rls_pb2.RateLimitResponse.RateLimit.Unit.MINUTE
    assert status.duration_until_reset.seconds == 50  # 10 s into the minute
    # One key per descriptor and window, expiring with the window.
    (key,) = redis.client().keys(KEY_PREFIX + "*")
    assert key == f"{KEY_PREFIX}gw|{CONFIG_KEY}=ns.a|client=x|{int(START)}"
    assert redis.client().get(key) == "3"
    assert 0 < redis.client().ttl(key) <= 60
    clock.now += 60  # the next window starts afresh
    assert (await stub.ShouldRateLimit(request("x"))).overall_code == OK


async def test_each_value_has_its_own_counter_and_unknown_descriptors_pass(
    service: tuple[rls_pb2_grpc.RateLimitServiceStub, Clock, RedisServer],
) -> None:
    stub, _, _ = service
    for _ in range(2):
        await stub.ShouldRateLimit(request("x"))
    both = await stub.ShouldRateLimit(request("x", "y"))
    assert both.overall_code == OVER
    assert [s.code for s in both.statuses] == [OVER, OK]
    other_domain = rls_pb2.RateLimitRequest(domain="other", descriptors=request("x").descriptors)
    assert (await stub.ShouldRateLimit(other_domain)).overall_code == OK


async def test_redis_down_is_unavailable_and_recovers(
    service: tuple[rls_pb2_grpc.RateLimitServiceStub, Clock, RedisServer],
) -> None:
    stub, _, redis = service
    redis.stop()
    try:
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await stub.ShouldRateLimit(request("x"))
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        redis.start()
    assert (await stub.ShouldRateLimit(request("x"))).overall_code == OK


async def test_no_configuration_yet_is_unavailable() -> None:
    server = grpc.aio.server()
    counter = RedisCounter("127.0.0.1", 1)
    rls_pb2_grpc.add_RateLimitServiceServicer_to_server(
        RateLimitService(Registry(), counter), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = rls_pb2_grpc.RateLimitServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await stub.ShouldRateLimit(request("x"))
            assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.stop(grace=0)
        await counter.close()


async def test_set_rules_count_under_their_own_counters(
    service: tuple[rls_pb2_grpc.RateLimitServiceStub, Clock, RedisServer],
) -> None:
    """Two set rules count for one descriptor: its status is the one over its limit, or
    the one with the fewest requests left."""
    stub, _, redis = service

    def set_request(*pairs: tuple[str, str]) -> rls_pb2.RateLimitRequest:
        entry = common_pb2.RateLimitDescriptor.Entry
        entries = [entry(key=SET_CONFIG_KEY, value="gw:settings")]
        entries += [entry(key=k, value=v) for k, v in pairs]
        return rls_pb2.RateLimitRequest(
            domain=DOMAIN, descriptors=[common_pb2.RateLimitDescriptor(entries=entries)]
        )

    first = await stub.ShouldRateLimit(set_request(("number", "one"), ("type", "a")))
    assert first.overall_code == OK
    assert first.statuses[0].limit_remaining == 0  # the per-minute rule: 0 left of 1
    second = await stub.ShouldRateLimit(set_request(("type", "a")))
    assert second.overall_code == OVER
    assert second.statuses[0].current_limit.requests_per_unit == 1
    other = await stub.ShouldRateLimit(set_request(("type", "b")))
    assert other.overall_code == OK
    assert other.statuses[0].limit_remaining == 2  # only the hourly rule: 3 of 5 used
    keys = sorted(redis.client().keys(KEY_PREFIX + "*"))
    assert [k.split("|")[1:-1] for k in keys] == [
        [f"{SET_CONFIG_KEY}=gw:settings", "gw.set.rule=0", "type=a"],
        [f"{SET_CONFIG_KEY}=gw:settings", "gw.set.rule=1"],
    ]


def test_redis_problem_says_why_redis_cannot_count(redis: RedisServer) -> None:
    """What `gwctl check` says of `gw up`'s rate-limit server: nothing while its Redis
    answers; where and why when nothing listens there or the address is not one."""
    assert redis_problem(redis.address) is None
    closed = f"127.0.0.1:{free_port()}"
    problem = redis_problem(closed)
    assert problem is not None and problem.startswith(f"redis at {closed} is unreachable: ")
    assert redis_problem("redis") == "redis at redis is unreachable: 'redis' is not host:port"
