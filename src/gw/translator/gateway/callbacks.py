"""The request paths of an OIDC login: the callback (a path, a path with a query, or a
regular expression with `parseCallbackPathAsRegex`), the logout and the front-channel
logout. Stage 1 checks them, tells the server what they are, and gives each a route of its
own (`extauth.py`), so that they reach the extauth server whatever the user's routes say.

With a regular expression, the redirect URI gw registers with the provider is `appUrl` + the
text the expression starts with (up to its first special character), which the expression
must itself match: `/callback(/.*)?` sends the provider `<appUrl>/callback` and takes
callbacks on `/callback/anything` too.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import re2

from gw.api.authconfig_oidc import OidcAuthorizationCode
from gw.translator import ir
from gw.translator.gateway.authstep import StepContext
from gw.translator.regex import RegexError, capture_groups


def flow_paths(oidc: OidcAuthorizationCode) -> list[tuple[str, ir.RouteMatch]]:
    """The requests that are the login's own (callback, logout, front-channel logout), as
    route matches: they get routes of their own so that they reach the extauth server."""
    query = tuple(ir.QueryMatch(name=k, value=v) for k, v in callback_query(oidc))
    callback = ir.RouteMatch(
        path_kind="regex" if oidc.parse_callback_path_as_regex else "exact",
        path=callback_path(oidc),
        query=query,
    )
    out = [("callback", callback)]
    for name, path in (
        ("logout", oidc.logout_path),
        ("frontchannel", oidc.front_channel_logout.path if oidc.front_channel_logout else None),
    ):
        if path:
            out.append((name, ir.RouteMatch(path_kind="exact", path=path)))
    return out


def redirect_uri(oidc: OidcAuthorizationCode) -> str:
    """Where the provider sends the browser back: `appUrl` + `callbackPath` (with its query),
    or, for a regular expression, + its literal start."""
    path = (
        literal_start(oidc.callback_path)
        if oidc.parse_callback_path_as_regex
        else oidc.callback_path
    )
    return oidc.app_url.rstrip("/") + path


def callback_path(oidc: OidcAuthorizationCode) -> str:
    """The request path of the callback (without the query), or its regular expression."""
    if oidc.parse_callback_path_as_regex:
        prefix: str = re2.escape(urlsplit(oidc.app_url).path.rstrip("/"))
        return prefix + oidc.callback_path
    return urlsplit(redirect_uri(oidc)).path


def callback_query(oidc: OidcAuthorizationCode) -> tuple[tuple[str, str], ...]:
    """The query parameters a plain `callbackPath` carries (the callback route matches them)."""
    if oidc.parse_callback_path_as_regex:
        return ()
    query = urlsplit(oidc.callback_path).query
    return tuple(tuple(p.partition("=")[::2]) for p in query.split("&") if p)  # type: ignore[misc]


def literal_start(pattern: str) -> str:
    """The text a regular expression starts with, up to its first special character (a
    character a quantifier makes optional is left out)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if char in "?*{" and out:
            out.pop()
        if char in "\\.[](){}*+?|^$":
            break
        out.append(char)
        i += 1
    return "".join(out)


def check_paths(oidc: OidcAuthorizationCode, ctx: StepContext) -> bool:
    ok = True
    if oidc.parse_callback_path_as_regex:
        ok = _check_callback_regex(oidc.callback_path, ctx)
    elif not oidc.callback_path.startswith("/") or "#" in oidc.callback_path:
        ctx.error("callbackPath", f"{oidc.callback_path!r} must be a path starting with /")
        ok = False
    paths = {"callbackPath": None if oidc.parse_callback_path_as_regex else callback_path(oidc)}
    for name, path in (
        ("logoutPath", oidc.logout_path),
        ("frontChannelLogout.path", oidc.front_channel_logout and oidc.front_channel_logout.path),
    ):
        if not path:
            continue
        if not path.startswith("/") or "?" in path or "#" in path:
            ctx.error(name, f"{path!r} must be a path starting with /")
            ok = False
        elif path in paths.values():
            other = next(k for k, v in paths.items() if v == path)
            ctx.error(name, f"must differ from {other}")
            ok = False
        paths[name] = path
    return ok


def _check_callback_regex(pattern: str, ctx: StepContext) -> bool:
    try:
        capture_groups(pattern)
    except RegexError as exc:
        ctx.error("callbackPath", str(exc))
        return False
    start = literal_start(pattern)
    if not start.startswith("/") or re2.fullmatch(pattern, start) is None:
        ctx.error(
            "callbackPath",
            f"with parseCallbackPathAsRegex, the expression must start with "
            f"a path that it matches itself ({start!r} does not): gw tells the provider "
            "appUrl + that path as the redirect URI",
        )
        return False
    return True
