"""Header values: every `%COMMAND%` gw lets through is one Envoy accepts, and what gw
refuses is what Envoy would NACK."""

from __future__ import annotations

import pytest

from gw.translator import ir
from gw.translator.envoy import build_xds
from gw.translator.gateway.headers import (
    NO_LENGTH_COMMANDS,
    PARAMETER_COMMANDS,
    PLAIN_COMMANDS,
    substitution_problem,
)
from tests.support.envoy_validate import envoy_refusal


def proxy_adding(values: list[str]) -> ir.Proxy:
    vhost = ir.VirtualHost(
        name="default_h",
        source=ir.SourceRef(kind="VirtualService", namespace="default", name="h"),
        domains=("*",),
        routes=(
            ir.Route(
                name="default_h-route-0",
                match=ir.RouteMatch(path_kind="prefix", path="/"),
                action=ir.DirectResponse(status=200),
            ),
        ),
        headers=ir.HeaderManipulation(
            request_headers_to_add=tuple(
                ir.HeaderValue(name=f"x-h{i}", value=v) for i, v in enumerate(values)
            )
        ),
    )
    listener = ir.Listener(name="l", address="127.0.0.1", port=8080, virtual_hosts=(vhost,))
    return ir.Proxy(name="gateway-proxy", namespace="gw-system", listeners=(listener,))


def test_every_substitution_gw_allows_is_accepted_by_envoy() -> None:
    values = [f"%{c}%" for c in sorted(PLAIN_COMMANDS)]
    values += [f"%{c}(x-param)%" for c in sorted(PARAMETER_COMMANDS - {"METADATA"})]
    values += [
        f"%{c}(x-param):12%" for c in sorted(PARAMETER_COMMANDS - NO_LENGTH_COMMANDS - {"METADATA"})
    ]
    values += ["%METADATA(ROUTE:gw.example:team)%", "%METADATA(VIRTUAL_HOST:ns:key):12%"]
    values += ["%START_TIME%", "%START_TIME(%Y-%m-%d)%", "100%% sure", "a%%b%REQ(x)%c"]
    assert all(substitution_problem(v) is None for v in values)
    assert envoy_refusal(build_xds(proxy_adding(values))) is None


@pytest.mark.parametrize(
    ("value", "envoy_says"),
    [
        ("100%", "Couldn't find valid command"),
        ("%NOT_A_COMMAND%", "Not supported field"),
        ("%REQ%", "requires parameters"),
        ("%HOSTNAME(x)%", "does not take any parameters"),
        ("%UPSTREAM_METADATA(x):3%", "does not allow length"),
        ("%req(x)%", "Couldn't find valid command"),
        ("%METADATA(x-param)%", "not supported type of metadata"),
    ],
)
def test_what_gw_refuses_envoy_would_refuse(value: str, envoy_says: str) -> None:
    assert substitution_problem(value) is not None
    refusal = envoy_refusal(build_xds(proxy_adding([value])))
    assert refusal is not None and envoy_says in refusal
