"""The `ldap` check: the request's basic-auth user binds at the LDAP server, and their entry
must be a member of an allowed group.

1. `Authorization: Basic` gives the user and password; without them (or with an empty
   password, which LDAP would take as an anonymous bind): `401`, empty body.
2. Bind as `user_dn_template % user` (the user name escaped as an RDN value, so it cannot
   name another entry); refused: `401`.
3. Unless `disable_group_checking`: read the entry (base scope, `search_filter`) as the
   user, or rebound as the service account (`check_groups_with_service_account`; that
   bind refused: `500`); one of its `membership_attribute` values must be an allowed group
   (compared as normalised DNs), else `403`.

The server unreachable, timing out or failing: `500 LDAP server unavailable` (fail
closed; the established gateway answers LDAP-side failures with 500). ldap3 is synchronous:
each check runs on a thread of the check's own pool, sized like the connection pool
(`pool_max_size` connections kept, `pool_initial_size` opened when the configuration
arrives; more are made when all are busy, and closed after use). A kept connection the
server dropped is replaced and the check tried again once. Passwords are never logged.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import ldap3
from ldap3.core.exceptions import LDAPException
from ldap3.utils.dn import escape_rdn

from gw.extauth.decisions import Allow, Decision, Deny, Request, State, text
from gw.wire.extauth_ldap import Ldap, normalized_dn

if TYPE_CHECKING:
    from gw.extauth.checks import Shared

log = logging.getLogger(__name__)

UNAUTHORIZED = Deny(401)
FORBIDDEN = Deny(403)
UNAVAILABLE = "LDAP server unavailable"
CONNECT_TIMEOUT = 2  # seconds
RECEIVE_TIMEOUT = 5


class Unavailable(Exception):
    """The server could not be reached or failed mid-way."""


def build(config: Ldap, where: str, shared: Shared) -> LdapCheck:
    return LdapCheck(config, where)


class LdapCheck:
    def __init__(self, config: Ldap, where: str) -> None:
        self.config = config
        self.where = where
        self.server = ldap3.Server(
            config.host,
            port=config.port,
            use_ssl=config.tls,
            connect_timeout=CONNECT_TIMEOUT,
            get_info=ldap3.NONE,
        )
        self.allowed = frozenset(config.allowed_groups)
        self.pool = _Pool(self.server, config.pool_max_size)
        self.threads = ThreadPoolExecutor(config.pool_max_size, thread_name_prefix="ldap")
        if config.pool_initial_size:
            self.threads.submit(self.pool.fill, config.pool_initial_size)

    def owns(self, request: Request) -> bool:
        return False

    async def check(self, request: Request, state: State) -> Decision:
        credentials = _basic(request.headers.get("authorization", ""))
        if credentials is None:
            return UNAUTHORIZED
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self.threads, self._decide, *credentials)
        except Unavailable as exc:
            log.warning("extauth %s: %s", self.where, exc)
            return text(500, UNAVAILABLE)

    async def close(self) -> None:
        self.threads.shutdown(wait=False, cancel_futures=True)
        self.pool.close()

    def _decide(self, user: str, password: str) -> Decision:
        for attempt in (1, 2):
            connection, reused = self.pool.take()
            try:
                decision = self._with(connection, user, password)
            except LDAPException as exc:
                self.pool.discard(connection)
                if reused and attempt == 1:
                    continue  # a kept connection the server dropped: once more, anew
                raise Unavailable(f"{self.config.host}:{self.config.port}: {exc}") from None
            self.pool.give(connection)
            return decision
        raise AssertionError("unreachable")

    def _with(self, connection: ldap3.Connection, user: str, password: str) -> Decision:
        config = self.config
        dn = config.user_dn_template % escape_rdn(user)
        if not _bind(connection, dn, password):
            return UNAUTHORIZED
        if config.disable_group_checking:
            return Allow(user=user)
        account = config.service_account
        if config.check_groups_with_service_account and account is not None:
            if not _bind(connection, account.username, account.password):
                log.warning("extauth %s: the service account cannot bind", self.where)
                return text(500, "LDAP service account cannot bind")
        connection.search(
            dn,
            config.search_filter,
            search_scope=ldap3.BASE,
            attributes=[config.membership_attribute],
        )
        groups = {
            normalized_dn(str(group))
            for entry in connection.response or []
            if entry.get("type") == "searchResEntry"
            for name, values in (entry.get("attributes") or {}).items()
            if name.lower() == config.membership_attribute.lower()
            for group in (values if isinstance(values, list) else [values])
        }
        return Allow(user=user) if groups & self.allowed else FORBIDDEN


def _bind(connection: ldap3.Connection, dn: str, password: str) -> bool:
    connection.user, connection.password = dn, password
    if connection.bind():
        return True
    code = (connection.result or {}).get("result")
    if code in (49, 48, 53):  # invalidCredentials, inappropriateAuth, unwillingToPerform
        return False
    raise Unavailable(f"bind answered {code} {(connection.result or {}).get('description')}")


def _basic(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep and user and password else None


class _Pool:
    """Connections to keep (at most `size`); `take` makes one when none is idle."""

    def __init__(self, server: ldap3.Server, size: int) -> None:
        self.server = server
        self.size = size
        self.idle: list[ldap3.Connection] = []
        self.lock = threading.Lock()

    def connection(self) -> ldap3.Connection:
        return ldap3.Connection(
            self.server,
            user="",
            password="",
            authentication=ldap3.SIMPLE,
            receive_timeout=RECEIVE_TIMEOUT,
            raise_exceptions=False,
            auto_bind=ldap3.AUTO_BIND_NONE,
        )

    def fill(self, count: int) -> None:
        for _ in range(count):
            connection = self.connection()
            try:
                connection.open()
            except LDAPException as exc:
                log.warning("extauth: LDAP %s not reachable yet: %s", self.server.host, exc)
                return
            self.give(connection)

    def take(self) -> tuple[ldap3.Connection, bool]:
        with self.lock:
            if self.idle:
                return self.idle.pop(), True
        return self.connection(), False

    def give(self, connection: ldap3.Connection) -> None:
        with self.lock:
            if len(self.idle) < self.size:
                self.idle.append(connection)
                return
        self.discard(connection)

    @staticmethod
    def discard(connection: ldap3.Connection) -> None:
        try:
            connection.unbind()
        except LDAPException:
            pass

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for connection in idle:
            self.discard(connection)
