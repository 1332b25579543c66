"""`booleanExpr`: how an AuthConfig combines its configs by name, e.g. `a && (b || !c)`.

`&&` binds tighter than `||`, `!` tighter than both, parentheses group; evaluation runs left
to right and stops as soon as the result is known (`a || b` never runs `b` when `a` allows).
Stage 1 parses an expression to report a mistake on the AuthConfig (with the position); the
extauth server parses the same string when the configuration arrives, into the tree it
evaluates on each request. Both use this one parser, so they cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: What a config name may hold in an expression (the names `configs[].name` can take).
NAME = re.compile(r"[A-Za-z0-9_.\-]+")
_TOKEN = re.compile(r"\s*(?:(&&|\|\||!|\(|\))|([A-Za-z0-9_.\-]+)|(\S)|$)")


@dataclass(frozen=True, slots=True)
class Ref:
    name: str


@dataclass(frozen=True, slots=True)
class Not:
    operand: Expr


@dataclass(frozen=True, slots=True)
class AllOf:
    operands: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    operands: tuple[Expr, ...]


Expr = Ref | Not | AllOf | AnyOf


class ExprError(ValueError):
    """The expression does not parse, or names a config that does not exist."""


def parse(text: str, names: frozenset[str] | set[str]) -> Expr:
    """The tree of `text`; raises ExprError saying what is wrong and where."""
    tokens = _tokens(text)
    parser = _Parser(tokens, text)
    tree = parser.disjunction()
    if parser.position < len(tokens):
        raise ExprError(f"unexpected {tokens[parser.position][1]!r} at character {parser.at()}")
    unknown = sorted(referenced(tree) - set(names))
    if unknown:
        raise ExprError(
            f"names {', '.join(unknown)}, which no config has (configs: {', '.join(sorted(names))})"
        )
    return tree


def referenced(tree: Expr) -> set[str]:
    match tree:
        case Ref(name):
            return {name}
        case Not(operand):
            return referenced(operand)
        case AllOf(operands) | AnyOf(operands):
            return set().union(*(referenced(o) for o in operands))


def _tokens(text: str) -> list[tuple[int, str]]:
    out = []
    position = 0
    while position < len(text):
        found = _TOKEN.match(text, position)
        assert found is not None  # `\S` matches anything left but spaces, `$` the spaces
        if found.group(3):
            raise ExprError(f"unexpected {found.group(3)!r} at character {found.start(3) + 1}")
        token = found.group(1) or found.group(2)
        if token:
            out.append((found.start(1) if found.group(1) else found.start(2), token))
        position = found.end()
    if not out:
        raise ExprError("is empty")
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[int, str]], text: str) -> None:
        self.tokens = tokens
        self.text = text
        self.position = 0

    def at(self) -> int:
        if self.position < len(self.tokens):
            return self.tokens[self.position][0] + 1
        return len(self.text) + 1

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise ExprError("ends too early: an operand is missing")
        self.position += 1
        return token

    def disjunction(self) -> Expr:
        operands = [self.conjunction()]
        while self.peek() == "||":
            self.take()
            operands.append(self.conjunction())
        return operands[0] if len(operands) == 1 else AnyOf(tuple(operands))

    def conjunction(self) -> Expr:
        operands = [self.unary()]
        while self.peek() == "&&":
            self.take()
            operands.append(self.unary())
        return operands[0] if len(operands) == 1 else AllOf(tuple(operands))

    def unary(self) -> Expr:
        at = self.at()
        token = self.take()
        if token == "!":
            return Not(self.unary())
        if token == "(":
            inner = self.disjunction()
            if self.peek() != ")":
                raise ExprError(f"the parenthesis at character {at} is not closed")
            self.take()
            return inner
        if NAME.fullmatch(token):
            return Ref(token)
        raise ExprError(f"unexpected {token!r} at character {at}: a config name is missing")
