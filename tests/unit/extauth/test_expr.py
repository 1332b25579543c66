"""A chain's `booleanExpr`: what does not parse is an error value (a status), never a crash."""

from __future__ import annotations

import pytest

from gw.wire.extauth_expr import AllOf, ExprError, Ref, parse


def test_trailing_spaces_are_ignored() -> None:
    assert parse("a && b  ", {"a", "b"}) == AllOf((Ref("a"), Ref("b")))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a && ", "ends too early: an operand is missing"),
        ("   ", "is empty"),
        ("a && (b ||", "ends too early: an operand is missing"),
    ],
)
def test_an_unfinished_expression_is_an_error(text: str, message: str) -> None:
    with pytest.raises(ExprError) as raised:
        parse(text, {"a", "b"})
    assert str(raised.value) == message
