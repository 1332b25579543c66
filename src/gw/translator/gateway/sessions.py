"""An OIDC config's `session` → `gw.wire.extauth_oidc.Session`: cookies or Redis, and the
cookies' attributes. Checked here so that a cookie a browser would drop, or a Redis address
the server cannot dial, is a status on the AuthConfig rather than a login that never sticks.

`session.redis` is the established name of the Redis store; `session.store`, which earlier
gw releases read, is accepted as another name for it.
"""

from __future__ import annotations

import base64

from gw.api.authconfig_oidc import CipherConfig, CookieOptions, RedisSession, UserSession
from gw.api.secret import ENCRYPTION_KEY_TYPE
from gw.translator.gateway.authstep import TOKEN, StepContext, milliseconds, secret_value
from gw.wire import extauth_oidc

#: The data key of an encryption key secret, and the length its value must have (AES-256).
ENCRYPTION_KEY = "key"
CIPHER_KEY_BYTES = 32
_SAME_SITE = {"LaxMode": "Lax", "StrictMode": "Strict", "NoneMode": "None"}


def build_session(
    session: UserSession, session_id_header: str | None, ctx: StepContext
) -> extauth_oidc.Session | None:
    field = "session"
    cookie = _cookie_options(session.cookie_options or CookieOptions(), ctx)
    cipher_key = None
    if session.cipher_config is not None:
        cipher_key = _cipher_key(session.cipher_config, ctx)
        if cipher_key is None:
            return None
    if session.redis is not None and session.store is not None:
        ctx.error(f"{field}.store", "set session.redis (store is its older name), not both")
        return None
    redis, redis_field = (session.redis, "redis") if session.redis else (session.store, "store")
    if redis is not None and session.cookie is not None:
        ctx.error(field, f"set either {redis_field} (Redis) or cookie, not both")
        return None
    if redis is None:
        return _cookie_session(session, cookie, session_id_header, cipher_key, ctx)
    if cipher_key is not None:
        ctx.warning(
            f"{field}.cipherConfig",
            "no effect with session.redis: the cookie holds only a session id, the tokens stay "
            "in Redis; cipherConfig encrypts cookie sessions",
        )
    store = _redis(redis, f"{field}.{redis_field}", ctx)
    header = redis.header_name or session_id_header
    if store is None or cookie is None or not _header_ok(redis, session_id_header, ctx):
        return None
    return extauth_oidc.Session(
        fail_on_fetch_failure=session.fail_on_fetch_failure,
        allow_refreshing=True if redis.allow_refreshing is None else redis.allow_refreshing,
        cookie=cookie,
        store=store,
        target_domain=_domain(redis.target_domain, f"{field}.{redis_field}.targetDomain", ctx),
        session_id_header=header.lower() if header else None,
    )


def _cipher_key(cipher: CipherConfig, ctx: StepContext) -> str | None:
    """The cookie key (base64) of `cipherConfig`; None after an error."""
    field = "session.cipherConfig"
    if cipher.key_ref is None:
        ctx.error(f"{field}.keyRef", "required: name the encryption key secret")
        return None
    key = secret_value(
        cipher.key_ref, ENCRYPTION_KEY_TYPE, ENCRYPTION_KEY, f"{field}.keyRef", ctx, "encryptionkey"
    )
    if key is None:
        return None
    raw = key.encode()
    if len(raw) != CIPHER_KEY_BYTES:
        ctx.error(
            f"{field}.keyRef",
            f"the key must be {CIPHER_KEY_BYTES} bytes long, not {len(raw)}",
        )
        return None
    return base64.b64encode(raw).decode()


def _cookie_session(
    session: UserSession,
    cookie: extauth_oidc.CookieOptions | None,
    session_id_header: str | None,
    cipher_key: str | None,
    ctx: StepContext,
) -> extauth_oidc.Session | None:
    prefix = session.cookie.key_prefix if session.cookie else None
    if prefix and not TOKEN.match(prefix):
        ctx.error("session.cookie.keyPrefix", f"{prefix!r} cannot start a cookie name")
        return None
    if session_id_header:
        ctx.error("sessionIdHeaderName", "needs session.redis: cookie sessions have no id")
        return None
    if cookie is None:
        return None
    target = session.cookie.target_domain if session.cookie else None
    return extauth_oidc.Session(
        fail_on_fetch_failure=session.fail_on_fetch_failure,
        allow_refreshing=bool(session.cookie and session.cookie.allow_refreshing),
        cookie=cookie,
        cookie_prefix=prefix or "",
        target_domain=_domain(target, "session.cookie.targetDomain", ctx),
        cipher_key=cipher_key,
    )


def _header_ok(redis: RedisSession, session_id_header: str | None, ctx: StepContext) -> bool:
    ok = True
    for name, value in (
        ("session.redis.headerName", redis.header_name),
        ("sessionIdHeaderName", session_id_header),
    ):
        if value is not None and not TOKEN.match(value):
            ctx.error(name, f"{value!r} is not a header name")
            ok = False
    return ok


def _redis(redis: RedisSession, field: str, ctx: StepContext) -> extauth_oidc.RedisStore | None:
    options = redis.options
    if options.host.startswith("unix://"):
        ctx.error(f"{field}.options.host", "a unix socket is not supported: reach Redis over TCP")
        return None
    host, _, port = options.host.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        ctx.error(
            f"{field}.options.host",
            f"{options.host!r} is not host:port (for example redis.gw-system:6379)",
        )
        return None
    if options.tls_cert_mount_path:
        ctx.not_supported(
            f"{field}.options.tlsCertMountPath", "Redis over TLS uses the system's CAs"
        )
        return None
    cookie_name = redis.cookie_name or "__session"
    if not TOKEN.match(cookie_name):
        ctx.error(f"{field}.cookieName", f"{cookie_name!r} is not a cookie name")
        return None
    return extauth_oidc.RedisStore(
        host=host,
        port=int(port),
        db=options.db,
        tls=options.socket_type == "TLS",
        pool_size=options.pool_size,
        cookie_name=cookie_name,
        key_prefix=redis.key_prefix or "",
        pre_expiry_buffer_ms=milliseconds(redis.pre_expiry_buffer, 2000),
    )


def _domain(domain: str | None, field: str, ctx: StepContext) -> str | None:
    if not domain:
        return None
    domain = domain.lower().lstrip(".")
    if not all(part and TOKEN.match(part) for part in domain.split(".")):
        ctx.error(field, f"{domain!r} is not a domain name")
        return None
    return domain


def _cookie_options(options: CookieOptions, ctx: StepContext) -> extauth_oidc.CookieOptions | None:
    field = "session.cookieOptions"
    same_site = _SAME_SITE.get(options.same_site or "")
    if same_site == "None" and options.not_secure:
        ctx.error(
            f"{field}.sameSite", "NoneMode needs a Secure cookie: browsers drop it with notSecure"
        )
        return None
    if options.max_age is not None and options.max_age < 0:
        ctx.error(f"{field}.maxAge", "must be 0 (no expiry) or more seconds")
        return None
    return extauth_oidc.CookieOptions(
        max_age=extauth_oidc.DEFAULT_COOKIE_MAX_AGE if options.max_age is None else options.max_age,
        secure=not options.not_secure,
        http_only=options.http_only is not False,
        path="/" if options.path is None else (options.path or None),
        same_site=same_site,  # type: ignore[arg-type]
        domain=options.domain or None,
    )
