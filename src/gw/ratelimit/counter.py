"""Fixed-window counters in Redis.

A window is one unit of the limit (a minute for `MINUTE`), aligned to the epoch so that
every replica of the server agrees on it. A descriptor's hits in a window live under one
key, `<prefix><domain>|<key>=<value>|...|<window start>`: INCRBY and EXPIRE (one unit) for
every descriptor of a request go in one pipelined round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from gw.wire.ratelimit import UNIT_SECONDS

KEY_PREFIX = "gw-ratelimit:"
#: A down Redis must be a clear error within Envoy's request timeout, not a hang.
REDIS_TIMEOUT = 1.0
MAX_CONNECTIONS = 64


@dataclass(frozen=True, slots=True)
class Window:
    key: str
    start: int
    seconds: int


def window(domain: str, entries: Sequence[tuple[str, str]], unit: str, now: float) -> Window:
    seconds = UNIT_SECONDS[unit]
    start = int(now) - int(now) % seconds
    parts = "|".join(f"{k}={v}" for k, v in entries)
    return Window(key=f"{KEY_PREFIX}{domain}|{parts}|{start}", start=start, seconds=seconds)


class RedisCounter:
    def __init__(self, host: str, port: int, db: int = 0) -> None:
        self.address = f"{host}:{port}"
        # A busy server waits (briefly) for a free connection rather than failing the check.
        pool = aioredis.BlockingConnectionPool(
            max_connections=MAX_CONNECTIONS,
            timeout=REDIS_TIMEOUT,
            host=host,
            port=port,
            db=db,
            socket_connect_timeout=REDIS_TIMEOUT,
            socket_timeout=REDIS_TIMEOUT,
        )
        self.client = aioredis.Redis(connection_pool=pool, retry=Retry(NoBackoff(), 0))

    async def hit(self, hits: Sequence[tuple[Window, int]]) -> list[int]:
        """Add `amount` to each window; the counts after. Raises redis or OS errors."""
        if not hits:
            return []
        pipe = self.client.pipeline(transaction=False)
        for win, amount in hits:
            pipe.incrby(win.key, amount)
            pipe.expire(win.key, win.seconds)
        results = await pipe.execute()
        return [int(results[2 * i]) for i in range(len(hits))]

    async def close(self) -> None:
        await self.client.aclose(close_connection_pool=True)


def split_address(address: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) → (host, port); ValueError otherwise."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{address!r} is not host:port")
    return host.strip("[]"), int(port)


def redis_problem(address: str) -> str | None:
    """Why a server could not count in Redis at `address` now (None: it answers PING).
    `gwctl check` asks it of `gw up`'s rate-limit server, which runs without its Redis but
    then fails every check (and Envoy's `denyOnFail` decides)."""
    try:
        host, port = split_address(address)
        client = redis.Redis(
            host=host, port=port, socket_connect_timeout=REDIS_TIMEOUT, socket_timeout=REDIS_TIMEOUT
        )
        with client:
            client.ping()
    except (ValueError, RedisError, OSError) as exc:
        return f"redis at {address} is unreachable: {exc}"
    return None
