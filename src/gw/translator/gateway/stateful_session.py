"""`httpGateway.options.statefulSession` → `ir.StatefulSession`: a client keeps reaching the
upstream host that served it first (Envoy's stateful session filter), through a cookie the
proxy sets or a header the client sends back."""

from __future__ import annotations

from gw.api.duration import duration_ms
from gw.api.http_listener_options import StatefulSession
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options.statefulSession"
_COOKIE_NAME = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def build_stateful_session(
    session: StatefulSession, report: ResourceReport
) -> ir.StatefulSession | None:
    if (session.cookie_based is None) == (session.header_based is None):
        report.error(FIELD, "set exactly one of cookieBased and headerBased")
        return None
    if session.header_based is not None:
        name = session.header_based.header_name
        problem = header_name_problem(name) if name else "name the header"
        if problem is not None:
            report.error(f"{FIELD}.headerBased.headerName", problem)
            return None
        return ir.StatefulSession(kind="header", header_name=name, strict=session.strict)
    cookie = session.cookie_based.cookie if session.cookie_based else None
    where = f"{FIELD}.cookieBased.cookie"
    if cookie is None or not cookie.name or not set(cookie.name) <= _COOKIE_NAME:
        report.error(f"{where}.name", "name the cookie (letters, digits and !#$%&'*+-.^_`|~)")
        return None
    if cookie.path and (not cookie.path.startswith("/") or any(c in cookie.path for c in ";\r\n")):
        report.error(f"{where}.path", "a cookie path starts with / and holds no ; or line break")
        return None
    if cookie.ttl is None:
        report.error(f"{where}.ttl", "set the cookie's lifetime (0s: until the browser closes)")
        return None
    return ir.StatefulSession(
        kind="cookie",
        cookie_name=cookie.name,
        cookie_path=cookie.path,
        cookie_ttl_ms=int(duration_ms(cookie.ttl)),
        strict=session.strict,
    )
