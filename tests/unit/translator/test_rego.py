"""Stage 1's Rego checks (`translator/gateway/rego.py`): what compiles, where the engine's
errors are, and calls of functions the engine lacks, found without running the policy."""

from __future__ import annotations

from gw.translator.gateway.rego import problems


def test_a_good_policy_has_no_problems() -> None:
    module = """package test
import data.lib
import rego.v1

f(x) := x + 1
g(y) if { y == 1 }
allow if {
    f(1) == 2; g(1); lib.h(2)
    [_, payload, _] := io.jwt.decode(input.state.jwt)
    startswith(payload.sub, "a")  # any(x) in a comment is no call
    x := "any(y)"
}
"""
    assert problems((("m/p.rego", module),), "data.test.allow == true") == ()


def test_syntax_errors_name_module_line_and_column() -> None:
    found = problems((("ns.cm/p.rego", "package t\nallow {\n    input.x ==\n}\n"),), "data.t.allow")
    assert found == ("ns.cm/p.rego:3:13: Invalid boolean operator",)
    assert problems((("m", "package t\nallow := true\n"),), "data.t.allow ==") == (
        "the query: Invalid boolean operator",
    )


def test_functions_the_engine_lacks_are_named_with_what_to_do() -> None:
    module = "package t\nallow {\n  any({true})\n  http.send({})\n  print(1)\n}\n"
    found = problems((("m/p.rego", module),), "data.t.allow")
    assert found == (
        "m/p.rego calls any(), which gw's Rego engine does not have: write `x in {...}` or "
        "`some x in xs` instead",
        "m/p.rego calls http.send(), which gw's Rego engine does not have: policies cannot "
        "call services; pass data through the chain's state",
        "m/p.rego calls print(), which gw's Rego engine does not have: remove the debugging call",
    )
