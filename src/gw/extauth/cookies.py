"""Reading the `cookie` request header and writing `set-cookie` response headers.

Parsing is on the hot path (every guarded request), so it is a plain split rather than
`http.cookies`, which is slow and chokes on values it does not like. Attributes come from
the AuthConfig's `cookieOptions` (`gw.wire.extauth_oidc.CookieOptions`).
"""

from __future__ import annotations

from gw.wire.extauth_oidc import CookieOptions


def parse_cookies(header: str) -> dict[str, str]:
    """`a=1; b=2` → {"a": "1", "b": "2"}; the first of repeated names wins (the most
    specific path comes first, RFC 6265 §5.4)."""
    out: dict[str, str] = {}
    for part in header.split(";"):
        name, sep, value = part.partition("=")
        if not sep:
            continue
        name = name.strip()
        if name and name not in out:
            value = value.strip()
            if len(value) > 1 and value[0] == value[-1] == '"':
                value = value[1:-1]
            out[name] = value
    return out


def set_cookie(
    name: str,
    value: str,
    options: CookieOptions,
    *,
    max_age: int | None = None,
    path: str | None = None,
    same_site: str | None = None,
) -> str:
    """A `set-cookie` value. `max_age`, `path` and `same_site` override the options' (a
    `max_age` of 0 here means "now": it deletes the cookie)."""
    parts = [f"{name}={value}"]
    age = options.max_age if max_age is None else max_age
    if max_age == 0 or age > 0:
        parts.append(f"Max-Age={age}")
    cookie_path = options.path if path is None else path
    if cookie_path:
        parts.append(f"Path={cookie_path}")
    if options.domain:
        parts.append(f"Domain={options.domain}")
    if options.secure:
        parts.append("Secure")
    if options.http_only:
        parts.append("HttpOnly")
    site = same_site or options.same_site
    if site:
        parts.append(f"SameSite={site}")
    return "; ".join(parts)


def clear_cookie(name: str, options: CookieOptions, *, path: str | None = None) -> str:
    """A `set-cookie` value that deletes the cookie (same path and domain as when set)."""
    return set_cookie(name, "", options, max_age=0, path=path)
