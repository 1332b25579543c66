"""Envoy's matching rules as `gw.explain.matching` applies them (each also checked against a
real Envoy by tests/e2e/test_explain.py)."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import regex_pb2, string_pb2

from gw.explain.matching import (
    describe_match,
    header_check,
    query_check,
    route_check,
    select_virtual_host,
)
from gw.explain.paths import prepare_path, query_params
from gw.explain.request import Request


def vhost(name: str, *domains: str) -> rc_pb2.VirtualHost:
    return rc_pb2.VirtualHost(name=name, domains=list(domains))


VHOSTS = [
    vhost("exact", "a.example.com"),
    vhost("suffix", "*.example.com"),
    vhost("longer", "*.api.example.com"),
    vhost("prefix", "shop.*"),
    vhost("port", "a.example.com:*"),
    vhost("any", "*"),
]


def chosen(host: str) -> str | None:
    found, _ = select_virtual_host(VHOSTS, host)
    return found.name if found else None


def test_domains_exact_then_longest_suffix_then_longest_prefix_then_any() -> None:
    assert chosen("a.example.com") == "exact"
    assert chosen("A.Example.COM") == "exact"
    assert chosen("b.example.com") == "suffix"
    assert chosen("x.api.example.com") == "longer"
    assert chosen("shop.anything") == "prefix"
    assert chosen("a.example.com:8080") == "port"
    # A wildcard stands for at least one character.
    assert chosen(".example.com") == "any"
    assert chosen("shop.") == "any"
    found, why = select_virtual_host(VHOSTS[:1], "b.example.com")
    assert found is None and why == "no virtual host has a domain matching 'b.example.com'"


def request(*headers: tuple[str, str], target: str = "/", method: str = "GET") -> Request:
    return Request(method=method, scheme="http", authority="z", target=target, headers=headers)


def exact(name: str, value: str, invert: bool = False) -> rc_pb2.HeaderMatcher:
    return rc_pb2.HeaderMatcher(
        name=name, invert_match=invert, string_match=string_pb2.StringMatcher(exact=value)
    )


def test_headers_absent_repeated_inverted() -> None:
    inverted = exact("x-debug", "1", invert=True)
    assert not header_check(inverted, request()).ok  # absent: no match, inverted or not
    assert not header_check(inverted, request(("x-debug", "1"))).ok
    assert header_check(inverted, request(("x-debug", "2"))).ok
    assert header_check(exact("x-a", "1"), request(("x-a", "2"), ("x-a", "1"))).ok
    assert not header_check(exact("x-a", "1,2"), request(("x-a", "1"), ("x-a", "2"))).ok
    absent = rc_pb2.HeaderMatcher(name="x-p", present_match=True, invert_match=True)
    assert header_check(absent, request()).ok
    assert not header_check(absent, request(("x-p", "1"))).ok
    method = rc_pb2.HeaderMatcher(
        name=":method",
        string_match=string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex="GET|POST")),
    )
    assert header_check(method, request(method="POST")).ok
    assert not header_check(method, request(method="PUT")).ok


def test_query_first_value_as_sent() -> None:
    q = rc_pb2.QueryParameterMatcher(name="q", string_match=string_pb2.StringMatcher(exact="abc"))
    assert query_check(q, query_params("q=abc&q=x")).ok
    assert not query_check(q, query_params("q=x&q=abc")).ok
    assert not query_check(q, query_params("q=a%62c")).ok
    assert query_params("q&r=") == [("q", ""), ("r", "")]


def test_paths_normalized_merged_and_escaped_slashes_redirected() -> None:
    options = {"normalize": True, "merge_slashes": True, "unescape_and_redirect": True}
    assert prepare_path("/a/../items/3?x=1", **options).path == "/items/3"
    assert prepare_path("//items//4", **options).path == "/items/4"
    assert prepare_path("/%69tems/%2e%2e/b", **options).path == "/b"
    assert prepare_path("/a%3Fb", **options).path == "/a%3Fb"
    escaped = prepare_path("/items%2F5?q=1", **options)
    assert escaped.redirect == "/items/5?q=1"


def test_route_checks_every_condition_and_says_why() -> None:
    match = rc_pb2.RouteMatch(prefix="/a", headers=[exact("x-flag", "on")])
    ok, checks = route_check(match, request(target="/b"), prepare_path("/b", **_plain()))
    assert not ok
    assert [(c.ok, c.why) for c in checks] == [
        (False, "path prefix /a"),
        (False, "header x-flag exact 'on': the request has no x-flag header"),
    ]
    assert describe_match(match) == "prefix /a, header x-flag exact 'on'"
    regex = rc_pb2.RouteMatch(safe_regex=regex_pb2.RegexMatcher(regex="/items/[0-9]+"))
    assert route_check(regex, request(), prepare_path("/items/12?x=1", **_plain()))[0]
    assert not route_check(regex, request(), prepare_path("/items/12/x", **_plain()))[0]


def _plain() -> dict[str, bool]:
    return {"normalize": False, "merge_slashes": False, "unescape_and_redirect": False}
