"""An AuthConfig's `session` → `gw.wire.extauth_oidc.Session`: cookies or Redis, and the cookies'
attributes. Checked here so that a cookie a browser would drop, or a Redis address the
server cannot dial, is a status on the AuthConfig rather than a login that never sticks."""

from __future__ import annotations

import re

from gw.api.authconfig import CookieOptions, UserSession
from gw.api.duration import duration_ms
from gw.translator.reports import ResourceReport
from gw.wire import extauth_oidc

OIDC_FIELD = "spec.configs[0].oauth2.oidcAuthorizationCode"
#: An HTTP token (RFC 9110): what cookie and header names must be.
TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SAME_SITE = {"LaxMode": "Lax", "StrictMode": "Strict", "NoneMode": "None"}


def build_session(session: UserSession, report: ResourceReport) -> extauth_oidc.Session | None:
    field = f"{OIDC_FIELD}.session"
    cookie = _cookie_options(session.cookie_options or CookieOptions(), report)
    if session.store is not None and session.cookie is not None:
        report.error(field, "set either store (Redis) or cookie, not both")
        return None
    if session.store is None:
        prefix = session.cookie.key_prefix if session.cookie else None
        if prefix and not TOKEN.match(prefix):
            report.error(f"{field}.cookie.keyPrefix", f"{prefix!r} cannot start a cookie name")
            return None
        if session.cookie is not None and session.cookie.target_domain:
            report.warning(f"{field}.cookie.targetDomain", "ignored: set cookieOptions.domain")
        if cookie is None:
            return None
        return extauth_oidc.Session(
            fail_on_fetch_failure=session.fail_on_fetch_failure,
            allow_refreshing=bool(session.cookie and session.cookie.allow_refreshing),
            cookie=cookie,
            cookie_prefix=prefix or "",
        )
    store = _redis(session, report)
    if store is None or cookie is None:
        return None
    allow = session.store.allow_refreshing
    return extauth_oidc.Session(
        fail_on_fetch_failure=session.fail_on_fetch_failure,
        allow_refreshing=True if allow is None else allow,
        cookie=cookie,
        store=store,
    )


def _redis(session: UserSession, report: ResourceReport) -> extauth_oidc.RedisStore | None:
    store = session.store
    assert store is not None
    field = f"{OIDC_FIELD}.session.store"
    host, _, port = store.options.host.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        report.error(
            f"{field}.options.host",
            f"{store.options.host!r} is not host:port (for example redis.gw-system:6379)",
        )
        return None
    if not TOKEN.match(store.cookie_name):
        report.error(f"{field}.cookieName", f"{store.cookie_name!r} is not a cookie name")
        return None
    for name, camel in (("target_domain", "targetDomain"), ("header_name", "headerName")):
        if getattr(store, name):
            report.warning(f"{field}.{camel}", "not supported by this gw build; ignored")
    buffer = store.pre_expiry_buffer
    return extauth_oidc.RedisStore(
        host=host,
        port=int(port),
        db=store.options.db,
        tls=store.options.socket_type == "TLS",
        pool_size=store.options.pool_size,
        cookie_name=store.cookie_name,
        key_prefix=store.key_prefix or "",
        pre_expiry_buffer_ms=int(duration_ms(buffer)) if buffer else 2000,
    )


def _cookie_options(
    options: CookieOptions, report: ResourceReport
) -> extauth_oidc.CookieOptions | None:
    field = f"{OIDC_FIELD}.session.cookieOptions"
    same_site = _SAME_SITE.get(options.same_site or "")
    if same_site == "None" and options.not_secure:
        report.error(
            f"{field}.sameSite", "NoneMode needs a Secure cookie: browsers drop it with notSecure"
        )
        return None
    if options.max_age is not None and options.max_age < 0:
        report.error(f"{field}.maxAge", "must be 0 (no expiry) or more seconds")
        return None
    return extauth_oidc.CookieOptions(
        max_age=extauth_oidc.DEFAULT_COOKIE_MAX_AGE if options.max_age is None else options.max_age,
        secure=not options.not_secure,
        http_only=options.http_only is not False,
        path="/" if options.path is None else (options.path or None),
        same_site=same_site,  # type: ignore[arg-type]
        domain=options.domain or None,
    )
