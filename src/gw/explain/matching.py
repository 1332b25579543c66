"""Envoy 1.40's matching rules, applied to one request.

Each rule was checked against a real Envoy (the e2e tests keep checking them):

- Virtual hosts: the `Host` header, lower-cased, is looked up exactly, then among suffix
  wildcards (`*.example.com`, `*-api.example.com`) longest suffix first, then among prefix
  wildcards (`example.*`, and `api.example.com:*` for any port) longest prefix first, then
  `*`. A wildcard stands for at least one character: `.example.com` is not `*.example.com`.
- Routes: the first route whose every condition holds. The path is matched without its
  query: `prefix` and `path` (exact) honour `case_sensitive`, `safe_regex` must match the
  whole path (RE2, case-sensitive always).
- Headers: a header given several times matches when one of its values does; a header that
  is absent matches only `present_match: false` (or an inverted `present_match: true`),
  whatever `invert_match` says otherwise. `:method`, `:path`, `:authority` are headers too.
- Query parameters: by exact (case-sensitive) name, the first occurrence, its value as sent
  (not percent-decoded); `?q` has the value "".
- Paths are normalized first (`paths.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import re2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import string_pb2

from gw.explain.paths import PreparedPath, query_params
from gw.explain.request import Request
from gw.translator.regex import compile_like_envoy


@dataclass(frozen=True, slots=True)
class Check:
    ok: bool
    #: Why (when ok: what matched; else: what did not).
    why: str


# --- strings ----------------------------------------------------------------------------


def regex_full_match(pattern: str, value: str) -> bool:
    try:
        return compile_like_envoy(pattern).fullmatch(value.encode("utf-8")) is not None
    except re2.error:
        return False  # Envoy would have refused the configuration


def string_matches(matcher: string_pb2.StringMatcher, value: str) -> bool:
    kind = matcher.WhichOneof("match_pattern")
    if kind == "safe_regex":
        return regex_full_match(matcher.safe_regex.regex, value)
    expected = str(getattr(matcher, kind)) if kind else ""
    if matcher.ignore_case:
        value, expected = value.lower(), expected.lower()
    if kind == "exact":
        return value == expected
    if kind == "prefix":
        return value.startswith(expected)
    if kind == "suffix":
        return value.endswith(expected)
    if kind == "contains":
        return expected in value
    return False  # `custom` matchers: gw sets none


def describe_string(matcher: string_pb2.StringMatcher) -> str:
    kind = matcher.WhichOneof("match_pattern")
    value = matcher.safe_regex.regex if kind == "safe_regex" else getattr(matcher, kind or "exact")
    name = "matching regex" if kind == "safe_regex" else kind
    case = " (any case)" if matcher.ignore_case else ""
    return f"{name} {value!r}{case}"


# --- headers and query parameters -------------------------------------------------------


def header_check(matcher: rc_pb2.HeaderMatcher, request: Request) -> Check:
    values = request.values(matcher.name)
    what = describe_header(matcher)
    if not values and matcher.treat_missing_header_as_empty:
        values = [""]
    spec = matcher.WhichOneof("header_match_specifier")
    if spec == "present_match":
        ok = (bool(values) == bool(matcher.present_match)) != bool(matcher.invert_match)
    elif not values:
        return Check(False, f"{what}: the request has no {matcher.name} header")
    else:
        matched = any(_header_value_matches(matcher, spec, v) for v in values)
        ok = matched != bool(matcher.invert_match)
    shown = ", ".join(repr(v) for v in values) or "none"
    return Check(ok, f"{what} (sent: {shown})")


def _header_value_matches(matcher: rc_pb2.HeaderMatcher, spec: str | None, value: str) -> bool:
    if spec == "string_match":
        return string_matches(matcher.string_match, value)
    if spec == "exact_match":
        return value == str(matcher.exact_match)
    if spec == "safe_regex_match":
        return regex_full_match(matcher.safe_regex_match.regex, value)
    if spec == "prefix_match":
        return value.startswith(matcher.prefix_match)
    if spec == "suffix_match":
        return value.endswith(matcher.suffix_match)
    if spec == "contains_match":
        return matcher.contains_match in value
    if spec == "range_match":
        try:
            number = int(value)
        except ValueError:
            return False
        return bool(matcher.range_match.start <= number < matcher.range_match.end)
    return True  # no specifier: the header must be present, and it is


def describe_header(matcher: rc_pb2.HeaderMatcher) -> str:
    spec = matcher.WhichOneof("header_match_specifier")
    name = matcher.name
    if name == ":method" and spec == "string_match":
        kind = matcher.string_match.WhichOneof("match_pattern")
        if kind == "safe_regex":
            text = f"method {matcher.string_match.safe_regex.regex}"
        else:
            text = f"method {describe_string(matcher.string_match)}"
    elif spec == "present_match":
        text = f"header {name} {'present' if matcher.present_match else 'absent'}"
    elif spec == "string_match":
        text = f"header {name} {describe_string(matcher.string_match)}"
    elif spec is None:
        text = f"header {name} present"
    else:
        value = getattr(matcher, spec)
        text = f"header {name} {spec.removesuffix('_match')} {value!r}"
    return f"not ({text})" if matcher.invert_match else text


def query_check(matcher: rc_pb2.QueryParameterMatcher, params: Sequence[tuple[str, str]]) -> Check:
    found = [v for n, v in params if n == matcher.name]
    what = describe_query(matcher)
    if matcher.WhichOneof("query_parameter_match_specifier") == "present_match":
        return Check(bool(found) == bool(matcher.present_match), what)
    if not found:
        return Check(False, f"{what}: the request has no query parameter {matcher.name}")
    ok = string_matches(matcher.string_match, found[0])
    return Check(ok, f"{what} (sent: {found[0]!r})")


def describe_query(matcher: rc_pb2.QueryParameterMatcher) -> str:
    if matcher.WhichOneof("query_parameter_match_specifier") == "present_match":
        return f"query {matcher.name} {'present' if matcher.present_match else 'absent'}"
    return f"query {matcher.name} {describe_string(matcher.string_match)}"


# --- routes -----------------------------------------------------------------------------

_UNEVALUATED = ("runtime_fraction", "grpc", "tls_context", "dynamic_metadata", "filter_state")
_REPEATED = frozenset({"dynamic_metadata", "filter_state"})


def route_check(
    match: rc_pb2.RouteMatch, request: Request, prepared: PreparedPath
) -> tuple[bool, list[Check]]:
    """Whether the route matches, and every condition with its result. A CONNECT request
    carries no path: only `connect_matcher` routes take it, and they take nothing else."""
    connect = request.method == "CONNECT"
    if match.WhichOneof("path_specifier") == "connect_matcher":
        checks = [Check(connect, "a CONNECT request")]
    elif connect:
        checks = [Check(False, "a CONNECT request has no path: only CONNECT routes take it")]
    else:
        checks = [_path_check(match, prepared.path)]
    checks += [header_check(h, request) for h in match.headers]
    params = query_params(prepared.query)
    checks += [query_check(q, params) for q in match.query_parameters]
    for field in _UNEVALUATED:
        if len(getattr(match, field)) if field in _REPEATED else match.HasField(field):
            checks.append(Check(False, f"{field}: explain does not evaluate it (gw sets none)"))
    return all(c.ok for c in checks), checks


def _path_check(match: rc_pb2.RouteMatch, path: str) -> Check:
    kind = match.WhichOneof("path_specifier")
    sensitive = not match.HasField("case_sensitive") or match.case_sensitive.value
    folded = path if sensitive else path.lower()
    case = "" if sensitive else " (any case)"
    if kind == "prefix":
        expected = match.prefix if sensitive else match.prefix.lower()
        return Check(folded.startswith(expected), f"path prefix {match.prefix}{case}")
    if kind == "path":
        expected = match.path if sensitive else match.path.lower()
        return Check(folded == expected, f"path {match.path}{case}")
    if kind == "safe_regex":
        regex = match.safe_regex.regex
        return Check(regex_full_match(regex, path), f"path matching regex {regex}")
    if kind == "path_separated_prefix":
        prefix = match.path_separated_prefix
        ok = folded == prefix or folded.startswith(prefix.rstrip("/") + "/")
        return Check(ok, f"path segment prefix {prefix}")
    return Check(False, f"{kind}: explain does not evaluate it (gw sets none)")


def describe_match(match: rc_pb2.RouteMatch) -> str:
    """`prefix /a, method GET|POST, header x-flag present, query q exact 'abc'`."""
    kind = match.WhichOneof("path_specifier")
    if kind == "safe_regex":
        parts = [f"regex {match.safe_regex.regex}"]
    elif kind == "connect_matcher":
        parts = ["CONNECT requests"]
    else:
        parts = [f"{'exact' if kind == 'path' else kind} {getattr(match, kind or 'prefix')}"]
    if match.HasField("case_sensitive") and not match.case_sensitive.value:
        parts[0] += " (any case)"
    parts += [describe_header(h) for h in match.headers]
    parts += [describe_query(q) for q in match.query_parameters]
    return ", ".join(parts)


# --- virtual hosts ----------------------------------------------------------------------


def select_virtual_host(
    vhosts: Sequence[rc_pb2.VirtualHost], authority: str, *, ignore_port: bool = False
) -> tuple[rc_pb2.VirtualHost | None, str]:
    """The virtual host Envoy picks for `authority`, and why."""
    host = authority.lower()
    if ignore_port:
        host = _without_port(host)
    exact: dict[str, rc_pb2.VirtualHost] = {}
    suffixes: dict[str, rc_pb2.VirtualHost] = {}
    prefixes: dict[str, rc_pb2.VirtualHost] = {}
    default = None
    for vhost in vhosts:
        for domain in (d.lower() for d in vhost.domains):
            if domain == "*":
                default = default or vhost
            elif domain.startswith("*"):
                suffixes.setdefault(domain[1:], vhost)
            elif domain.endswith("*"):
                prefixes.setdefault(domain[:-1], vhost)
            else:
                exact.setdefault(domain, vhost)
    if host in exact:
        return exact[host], f"exact domain {host!r}"
    for suffix in sorted(suffixes, key=len, reverse=True):
        if len(host) > len(suffix) and host.endswith(suffix):
            return suffixes[suffix], f"wildcard domain '*{suffix}' (longest suffix that matches)"
    for prefix in sorted(prefixes, key=len, reverse=True):
        if len(host) > len(prefix) and host.startswith(prefix):
            return prefixes[prefix], f"wildcard domain '{prefix}*' (longest prefix that matches)"
    if default is not None:
        return default, f"catch-all domain '*' (no other domain matches {host!r})"
    return None, f"no virtual host has a domain matching {host!r}"


def _without_port(host: str) -> str:
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rpartition(":")[0] if host.count(":") == 1 else host
