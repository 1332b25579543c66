"""Route matchers → `ir.RouteMatch`: one path specifier (prefix, exact or regex), headers,
query parameters and methods; regexes checked with RE2 as Envoy compiles them."""

from __future__ import annotations

import functools

from gw.api.virtualservice import Matcher
from gw.translator import ir
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import ResourceReport


def build_match(m: Matcher, field: str, report: ResourceReport) -> ir.RouteMatch | None:
    paths = [
        (k, v)
        for k, v in (
            ("prefix", m.prefix),
            ("exact", m.exact),
            ("regex", m.regex),
            ("connectMatcher", "" if m.connect_matcher is not None else None),
        )
        if v is not None
    ]
    if not paths:
        report.error(
            field, "no path specifier provided: set one of prefix, exact, regex or connectMatcher"
        )
        return None
    if len(paths) > 1:
        names = ", ".join(k for k, _ in paths)
        report.error(field, f"a matcher takes one path specifier, not {names}")
        return None
    kind, path = paths[0]
    if kind == "connectMatcher":
        kind = "connect"  # HTTP CONNECT requests, which carry no path
    if kind in ("prefix", "exact") and not path.startswith("/"):
        report.error(f"{field}.{kind}", f"{path!r} must start with /")
        return None
    if kind == "regex" and not _regex_ok(path, f"{field}.regex", report):
        return None
    headers = []
    for i, h in enumerate(m.headers):
        if h.regex and not _regex_ok(h.value, f"{field}.headers[{i}].value", report):
            return None
        headers.append(
            ir.HeaderMatch(name=h.name, value=h.value, regex=h.regex, invert=h.invert_match)
        )
    query = []
    for i, q in enumerate(m.query_parameters):
        if q.regex and not _regex_ok(q.value, f"{field}.queryParameters[{i}].value", report):
            return None
        query.append(ir.QueryMatch(name=q.name, value=q.value, regex=q.regex))
    case_sensitive = m.case_sensitive is not False
    if not headers and not query and not m.methods:
        return _path_match(kind, path, case_sensitive)
    return ir.RouteMatch(
        path_kind=kind,  # type: ignore[arg-type]
        path=path,
        case_sensitive=case_sensitive,
        headers=tuple(headers),
        query=tuple(query),
        methods=tuple(m.methods),
    )


@functools.lru_cache(maxsize=4096)
def _path_match(kind: str, path: str, case_sensitive: bool) -> ir.RouteMatch:
    """A match on the path alone, one value per path: the IR is frozen, and most routes of
    a large configuration match a few paths (`/`, `/api`) alone."""
    return ir.RouteMatch(path_kind=kind, path=path, case_sensitive=case_sensitive)  # type: ignore[arg-type]


def _regex_ok(pattern: str, field: str, report: ResourceReport) -> bool:
    try:
        capture_groups(pattern)
    except RegexError as exc:
        report.error(field, str(exc))
        return False
    return True
