"""The server's side of Envoy's contract, for what the end-to-end tests cannot see: how a
decision becomes a CheckResponse (dynamic metadata, appended and removed headers), and
that a configuration the server cannot run is refused whole (a NACK) while the previous
one keeps serving."""

from __future__ import annotations

import pytest
from envoy.config.core.v3 import base_pb2
from google.protobuf import json_format

from gw.extauth.decisions import Allow, Deny
from gw.extauth.server import Registry, check_response
from gw.wire import extauth, extauth_basic, extauth_jwt


def config(expr: str | None = None) -> extauth.AuthConfig:
    steps = (
        extauth.Step(name="a", check=extauth_jwt.JwtStep()),
        extauth.Step(name="b", check=extauth_basic.BasicAuth()),
    )
    return extauth.AuthConfig(
        config_id="ns.c", namespace="ns", name="c", steps=steps, boolean_expr=expr
    )


def test_allow_becomes_ok_response() -> None:
    allow = Allow(
        headers=(("x-set", "1"),),
        append_headers=(("x-add", "2"),),
        remove_headers=("x-user-id",),
        response_headers=(("x-note", "n"),),
        set_cookies=("s=1",),
        metadata=(("email", '"a@example.com"'), ("groups", '["x"]')),
    )
    response = check_response(allow)
    ok = response.ok_response
    append = base_pb2.HeaderValueOption.APPEND_IF_EXISTS_OR_ADD
    assert [(h.header.key, h.append_action == append) for h in ok.headers] == [
        ("x-set", False),
        ("x-add", True),
    ]
    assert list(ok.headers_to_remove) == ["x-user-id"]
    assert [h.header.key for h in ok.response_headers_to_add] == ["x-note", "set-cookie"]
    assert json_format.MessageToDict(response.dynamic_metadata) == {
        "email": "a@example.com",
        "groups": ["x"],
    }


def test_deny_becomes_denied_response() -> None:
    response = check_response(Deny(401, headers=(("www-authenticate", 'Basic realm=""'),)))
    denied = response.denied_response
    assert denied.status.code == 401 and denied.body == ""
    assert [(h.header.key, h.header.value) for h in denied.headers] == [
        ("www-authenticate", 'Basic realm=""')
    ]


async def test_a_configuration_that_cannot_run_is_refused_whole() -> None:
    registry = Registry()
    try:
        registry.update({"ns.c": config("a || b")})
        before = registry.chains["ns.c"]
        with pytest.raises(ValueError, match="names z"):
            registry.update({"ns.c": config("a || z"), "ns.d": config()})
        assert registry.chains == {"ns.c": before}
    finally:
        await registry.close()
