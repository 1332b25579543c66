"""Where a logged-in browser's tokens live: in its cookies, or in Redis behind a handle.

- `CookieSessions` (no `session.store`): the cookies `id_token` and `access_token` (and
  `refresh_token` when refreshing is allowed), prefixed `<keyPrefix>_` when set. Nothing is
  kept server-side, so the ID token is verified on every request (cached in memory). With
  `cipherConfig` each value is sealed with AES-256-GCM under the configured key, bound to
  its cookie's name (`CookieCipher`): the browser can neither read the tokens nor swap
  them between cookies, and a cookie that does not open is no session (a new login).
- `RedisSessions` (`session.store`): the cookie `cookieName` holds only a random session
  id (256 bits); the tokens are a JSON value at `<keyPrefix><id>` that expires with them
  (with refreshing, after the cookie's `maxAge`). A token with many claims never meets the
  browser's cookie size limit (about 4 KB). Entries read from Redis are kept in memory for
  `LOCAL_CACHE_SECONDS`, so a busy session costs one Redis read per that period; a logout
  through this server evicts at once (through another replica, within that period). The
  reads of concurrent checks share round trips: while one MGET is in flight, the keys asked
  for meanwhile wait and go together in the next (`BatchedReads`), so Redis and the client
  library's per-command cost is paid once per batch rather than once per check.

Redis errors raise `StoreUnavailable`: the flow decides what that means
(`failOnFetchFailure`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Protocol

import redis.asyncio as aioredis
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from gw.extauth.cookies import clear_cookie, set_cookie
from gw.wire.extauth_oidc import DEFAULT_COOKIE_MAX_AGE, RedisStore, Session

log = logging.getLogger(__name__)

LOCAL_CACHE_SECONDS = 2.0
LOCAL_CACHE_SIZE = 50_000
REDIS_TIMEOUT = 1.0  # seconds, connect and each command


class StoreUnavailable(Exception):
    """The session store could not be read or written."""


@dataclass(frozen=True, slots=True)
class Tokens:
    id_token: str
    access_token: str
    refresh_token: str | None
    #: Unix time the session needs refreshing (the ID token's `exp`).
    expires_at: float


class SessionStore(Protocol):
    async def load(self, cookies: Mapping[str, str]) -> Tokens | None: ...

    async def save(
        self, tokens: Tokens, cookies: Mapping[str, str], sid: str | None = None
    ) -> list[str]:
        """Store `tokens` as this browser's session (under `sid`, a `new_id()`, when the
        store keeps sessions by id); returns the `set-cookie` values."""
        ...

    async def delete(self, cookies: Mapping[str, str]) -> list[str]:
        """End this browser's session; returns the `set-cookie` values that clear it."""
        ...


class CookieCipher:
    """`cipherConfig`: cookie values sealed with AES-256-GCM (a random nonce each time), the
    cookie's name as associated data; text a browser can store (base64url)."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def seal(self, name: str, value: str) -> str:
        nonce = secrets.token_bytes(12)
        sealed = nonce + self._aead.encrypt(nonce, value.encode(), name.encode())
        return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()

    def open(self, name: str, text: str) -> str | None:
        """The value `text` seals for the cookie `name`; None when it is not one."""
        try:
            sealed = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            return self._aead.decrypt(sealed[:12], sealed[12:], name.encode()).decode()
        except (ValueError, InvalidTag):
            return None


class CookieSessions:
    def __init__(self, session: Session) -> None:
        self.session = session
        prefix = f"{session.cookie_prefix}_" if session.cookie_prefix else ""
        self.names = (prefix + "id_token", prefix + "access_token", prefix + "refresh_token")
        key = session.cipher_key
        self.cipher = CookieCipher(base64.b64decode(key)) if key else None

    async def load(self, cookies: Mapping[str, str]) -> Tokens | None:
        id_token, access_token, refresh_token = (self._read(n, cookies) for n in self.names)
        if not id_token:
            return None
        return Tokens(id_token, access_token or "", refresh_token or None, expires_at=0.0)

    async def save(
        self, tokens: Tokens, cookies: Mapping[str, str], sid: str | None = None
    ) -> list[str]:
        options = self.session.cookie
        values = [tokens.id_token, tokens.access_token]
        if self.session.allow_refreshing and tokens.refresh_token:
            values.append(tokens.refresh_token)
        return [
            set_cookie(name, self._written(name, value), options)
            for name, value in zip(self.names, values, strict=False)
        ]

    def _read(self, name: str, cookies: Mapping[str, str]) -> str | None:
        value = cookies.get(name)
        if not value or self.cipher is None:
            return value
        return self.cipher.open(name, value)

    def _written(self, name: str, value: str) -> str:
        return value if self.cipher is None else self.cipher.seal(name, value)

    async def delete(self, cookies: Mapping[str, str]) -> list[str]:
        return [clear_cookie(n, self.session.cookie) for n in self.names if n in cookies]


class RedisSessions:
    def __init__(
        self, session: Session, client: aioredis.Redis, cache_seconds: float = LOCAL_CACHE_SECONDS
    ) -> None:
        assert session.store is not None
        self.cache_seconds = cache_seconds
        self.session = session
        self.store: RedisStore = session.store
        self.client = client
        self.reads = BatchedReads(client)
        self._cache: OrderedDict[str, tuple[Tokens | None, float]] = OrderedDict()

    async def load(self, cookies: Mapping[str, str]) -> Tokens | None:
        sid = cookies.get(self.store.cookie_name)
        if not sid or len(sid) > 128:
            return None
        now = time.monotonic()
        cached = self._cache.get(sid)
        if cached is not None and cached[1] > now:
            return cached[0]
        raw = await self.reads.get(self.store.key_prefix + sid)
        tokens = _decode(raw if isinstance(raw, str) or raw is None else raw.decode())
        self._remember(sid, tokens, now)
        return tokens

    @staticmethod
    def new_id() -> str:
        """A new session id for every login (never reuse the one the browser sent)."""
        return secrets.token_urlsafe(32)

    async def save(
        self, tokens: Tokens, cookies: Mapping[str, str], sid: str | None = None
    ) -> list[str]:
        sid = sid or self.new_id()
        await self._write(sid, tokens)
        return [set_cookie(self.store.cookie_name, sid, self.session.cookie)]

    async def update(self, cookies: Mapping[str, str], tokens: Tokens) -> None:
        """Replace the tokens of the current session (after a refresh)."""
        sid = cookies.get(self.store.cookie_name)
        if sid:
            await self._write(sid, tokens)

    async def delete(self, cookies: Mapping[str, str]) -> list[str]:
        sid = cookies.get(self.store.cookie_name)
        if not sid:
            return []
        self._cache.pop(sid, None)
        cleared = [clear_cookie(self.store.cookie_name, self.session.cookie)]
        try:
            await self.client.delete(self.store.key_prefix + sid)
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from None
        return cleared

    async def _write(self, sid: str, tokens: Tokens) -> None:
        value = json.dumps(asdict(tokens), separators=(",", ":"))
        try:
            await self.client.set(self.store.key_prefix + sid, value, ex=self._ttl(tokens))
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from None
        self._remember(sid, tokens, time.monotonic())

    def _ttl(self, tokens: Tokens) -> int:
        """Seconds the entry lives: as long as the tokens, or, when they can be refreshed,
        as long as the cookie (a session cookie: the default 30 days)."""
        if self.session.allow_refreshing and tokens.refresh_token:
            return self.session.cookie.max_age or DEFAULT_COOKIE_MAX_AGE
        return max(1, int(tokens.expires_at - time.time()))

    def _remember(self, sid: str, tokens: Tokens | None, now: float) -> None:
        if self.cache_seconds <= 0:
            return
        self._cache[sid] = (tokens, now + self.cache_seconds)
        self._cache.move_to_end(sid)
        while len(self._cache) > LOCAL_CACHE_SIZE:
            self._cache.popitem(last=False)


class BatchedReads:
    """GETs of concurrent checks as one MGET at a time: keys asked for while a batch is in
    flight go in the next one. A failed batch fails each of its readers
    (`StoreUnavailable`); a reader that gave up (cancelled) is skipped."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client
        self._waiting: dict[str, list[asyncio.Future[str | bytes | None]]] = {}
        self._busy = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def get(self, key: str) -> str | bytes | None:
        future: asyncio.Future[str | bytes | None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(key, []).append(future)
        if not self._busy:
            self._busy = True
            task = asyncio.ensure_future(self._run())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await future

    async def _run(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, {}
                await self._read(batch)
        finally:
            self._busy = False

    async def _read(self, batch: dict[str, list[asyncio.Future[str | bytes | None]]]) -> None:
        keys = list(batch)
        try:
            values = await self.client.mget(keys)
        except (RedisError, OSError) as exc:
            for futures in batch.values():
                for future in futures:
                    if not future.done():
                        future.set_exception(StoreUnavailable(str(exc)))
            return
        for key, value in zip(keys, values, strict=True):
            for future in batch[key]:
                if not future.done():
                    future.set_result(value)


def redis_client(store: RedisStore) -> aioredis.Redis:
    """A pooled client that fails fast: no retries, short timeouts (a down Redis must be a
    clear answer within Envoy's `requestTimeout`, not a hang)."""
    return aioredis.Redis(
        host=store.host,
        port=store.port,
        db=store.db,
        ssl=store.tls,
        max_connections=store.pool_size or 64,
        socket_connect_timeout=REDIS_TIMEOUT,
        socket_timeout=REDIS_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
        decode_responses=True,
    )


def _decode(raw: str | None) -> Tokens | None:
    """The tokens of a stored session; an entry that cannot be read counts as none (a new
    login replaces it)."""
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        return Tokens(
            id_token=str(data["id_token"]),
            access_token=str(data["access_token"]),
            refresh_token=data.get("refresh_token") or None,
            expires_at=float(data["expires_at"]),
        )
    except (ValueError, KeyError, TypeError):
        log.warning("extauth: a stored session cannot be read; starting a new login")
        return None
