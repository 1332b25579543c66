"""The manifests `gwctl create upstream static` and `gwctl add route` build from their
options (the commands themselves run against a real `gw up` in
tests/e2e/test_gwctl_routes.py)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
import typer

from gw.cli.add_route import compare_routes, path_matcher, request_matchers, route_action
from gw.cli.create import static_hosts


def test_static_hosts_default_to_port_80_and_take_bracketed_ipv6() -> None:
    assert static_hosts("api.example.com, 10.0.0.1:8080,[::1]:9000,[fd00::2]") == [
        {"addr": "api.example.com", "port": 80},
        {"addr": "10.0.0.1", "port": 8080},
        {"addr": "::1", "port": 9000},
        {"addr": "fd00::2", "port": 80},
    ]


@pytest.mark.parametrize("text", ["", " , ", "a:0", "a:65536", "a:x", "::1", "[::1]x"])
def test_static_hosts_refuses_what_is_not_a_host(text: str) -> None:
    with pytest.raises(typer.Exit):
        static_hosts(text)


def test_a_delegation_wins_over_a_group_which_wins_over_an_upstream() -> None:
    upstream, group, delegate = ("us", "gw-system"), ("ug", "team"), ("rt", "team")
    none = (None, "gw-system")
    assert route_action(upstream, group, delegate) == {
        "delegateAction": {"ref": {"name": "rt", "namespace": "team"}}
    }
    assert route_action(upstream, group, none) == {
        "routeAction": {"upstreamGroup": {"name": "ug", "namespace": "team"}}
    }
    assert route_action(upstream, none, none) == {
        "routeAction": {"single": {"upstream": {"name": "us", "namespace": "gw-system"}}}
    }
    with pytest.raises(typer.Exit):
        route_action(none, none, none)


def test_matchers_are_sorted_by_name_and_values_are_regexes() -> None:
    assert path_matcher(None, "/exact", None) == {"exact": "/exact"}
    assert request_matchers(["get,post", "put"], ["b=2,a=1"], ["q=x.*"]) == {
        "headers": [
            {"name": "a", "value": "1", "regex": True},
            {"name": "b", "value": "2", "regex": True},
        ],
        "queryParameters": [{"name": "q", "value": "x.*", "regex": True}],
        "methods": ["GET", "POST", "PUT"],
    }
    assert request_matchers(None, None, None) == {}


def test_route_sort_puts_the_most_specific_first() -> None:
    """The established tool's order: more methods, then exact < regex < prefix, then the
    greater path first; a route is as specific as its most specific matcher."""
    routes = [
        {"matchers": [{"prefix": "/"}]},
        {"matchers": [{"prefix": "/api"}]},
        {"matchers": [{"regex": "/r.*"}]},
        {"matchers": [{"prefix": "/api/users"}]},
        {"matchers": [{"exact": "/api/x"}]},
        {},  # no matchers: prefix /
        {"matchers": [{"prefix": "/z"}, {"exact": "/a"}]},
        {"matchers": [{"prefix": "/", "methods": ["GET"]}]},
    ]
    ordered = sorted(routes, key=functools.cmp_to_key(compare_routes))
    assert ordered == [
        {"matchers": [{"prefix": "/", "methods": ["GET"]}]},
        {"matchers": [{"exact": "/api/x"}]},
        {"matchers": [{"prefix": "/z"}, {"exact": "/a"}]},
        {"matchers": [{"regex": "/r.*"}]},
        {"matchers": [{"prefix": "/api/users"}]},
        {"matchers": [{"prefix": "/api"}]},
        {"matchers": [{"prefix": "/"}]},
        {},
    ]


def test_a_route_goes_into_a_manifest_whose_routes_are_empty_or_null() -> None:
    """`routes:` or `virtualHost:` left empty in a file reads as null: the route list is
    made there; a route list that is not a list is refused."""
    from gw.cli.add_route import _routes

    vs: dict[str, Any] = {"kind": "VirtualService", "metadata": {"name": "a"}, "spec": {}}
    vs["spec"]["virtualHost"] = None
    _routes(vs).append("route")
    assert vs["spec"] == {"virtualHost": {"routes": ["route"]}}
    table: dict[str, Any] = {"kind": "RouteTable", "metadata": {"name": "t"}, "spec": None}
    _routes(table).append("route")
    assert table["spec"] == {"routes": ["route"]}
    with pytest.raises(typer.Exit):
        _routes({"kind": "RouteTable", "metadata": {"name": "t"}, "spec": {"routes": "x"}})
