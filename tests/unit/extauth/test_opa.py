"""The opaAuth check in-process with the real Rego engine: the input document's shape, how
the query's answer decides, `fastInputConversion`, the decision reason, and that modules
are compiled when the check is built (not per request)."""

from __future__ import annotations

import asyncio
import json

import pytest

from gw.extauth import opa
from gw.extauth.decisions import Allow, Request
from gw.wire.extauth_opa import Module, OpaAuth

POLICY = """package t
import rego.v1

default allow := false
allow if {
    input.http_request.method == "GET"
    input.state.jwt == "token"
}
has_check if input.check_request.attributes.request.http.path == "/x"
reason := ["yes", "because"]
"""


def check(query: str, **options: bool) -> opa.OpaCheck:
    config = OpaAuth(modules=(Module(name="m/p.rego", source=POLICY),), query=query, **options)
    return opa.OpaCheck(config, "gw-system.a/step")


def decide(c: opa.OpaCheck, state: dict[str, object], method: str = "GET") -> object:
    return asyncio.run(c.check(Request("/x", method=method, host="h"), dict(state)))


def test_allow_and_deny_by_the_first_expression() -> None:
    c = check("data.t.allow == true")
    assert decide(c, {"jwt": "token"}) == opa.ALLOWED
    assert decide(c, {"jwt": "other"}) == opa.DENIED  # undefined
    assert decide(c, {"jwt": "token"}, "POST") == opa.DENIED
    assert decide(check("data.t.allow"), {}) == opa.DENIED  # false


def test_array_results_and_the_decision_reason() -> None:
    allowed = decide(check("[data.t.allow, 1]"), {"jwt": "token"})
    assert allowed == opa.ALLOWED
    reasoned = decide(check("data.t.reason", return_decision_reason=True), {})
    assert reasoned == opa.DENIED  # "yes" is not true
    c = check("[data.t.allow, data.t.reason[1]]", return_decision_reason=True)
    answer = decide(c, {"jwt": "token"})
    assert isinstance(answer, Allow)
    assert json.loads(dict(answer.metadata)["step"]) == {
        "reason": {"allowed": True, "body": "because"}
    }


def test_fast_input_conversion_leaves_out_the_check_request() -> None:
    """Without a CheckRequest the slow path builds `http_request` from the request too;
    the fast path keeps only plain values of the state."""
    assert decide(check("data.t.has_check == true"), {}) == opa.DENIED
    fast = check("data.t.allow == true", fast_input_conversion=True)
    assert decide(fast, {"jwt": "token", "odd": [1, 2]}) == opa.ALLOWED
    assert opa._plain({"a": 1, "b": {"c": 2}, "d": ["x"], "e": [1]}) == {
        "a": 1,
        "b": {"c": 2},
        "d": ["x"],
    }


def test_a_policy_that_does_not_compile_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="does not compile"):
        opa.OpaCheck(
            OpaAuth(modules=(Module(name="m", source="package t\nallow {"),), query="data.t"),
            "x/y",
        )
