"""Expressions of the template language (`template.py` parses the statements around
them): literals, variables, operators, calls and `x | f(y)`, with every function checked
against the ones gw's Lua runtime has."""

from __future__ import annotations

import json
import re

from gw.translator import ir

#: Function → (fewest, most) arguments. The custom functions of the established gateway,
#: then Inja's own.
FUNCTIONS: dict[str, tuple[int, int]] = {
    "header": (1, 1), "request_header": (1, 1), "extraction": (1, 1), "body": (0, 0),
    "context": (0, 0), "env": (1, 1), "base64_encode": (1, 1), "base64_decode": (1, 1),
    "base64url_encode": (1, 1), "base64url_decode": (1, 1), "substring": (2, 3),
    "replace_with_random": (2, 2), "raw_string": (1, 1), "word_count": (1, 1),
    "dynamic_metadata": (1, 2),
    "default": (2, 2), "exists": (1, 1), "existsIn": (2, 2), "upper": (1, 1), "lower": (1, 1),
    "capitalize": (1, 1), "length": (1, 1), "first": (1, 1), "last": (1, 1), "at": (2, 2),
    "join": (2, 2), "replace": (3, 3), "int": (1, 1), "float": (1, 1), "round": (2, 2),
    "range": (1, 1), "min": (1, 1), "max": (1, 1), "sort": (1, 1), "odd": (1, 1),
    "even": (1, 1), "divisibleBy": (2, 2), "isArray": (1, 1), "isBoolean": (1, 1),
    "isFloat": (1, 1), "isInteger": (1, 1), "isNumber": (1, 1), "isObject": (1, 1),
    "isString": (1, 1),
}  # fmt: skip
_REFUSED = {
    "clusterMetadata": "Envoy's Lua filter cannot read a cluster's metadata",
    "cluster_metadata": "Envoy's Lua filter cannot read a cluster's metadata",
    "host_metadata": "Envoy's Lua filter cannot read an endpoint's metadata",
}
_TOKEN = re.compile(
    r"""\s*(?:(?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
    r"""|(?P<id>[A-Za-z_][A-Za-z0-9_.\-/]*)|(?P<op>==|!=|<=|>=|[-+*/%^<>()\[\],|=]))"""
)
_COMPARE = ("==", "!=", "<=", ">=", "<", ">")


class TemplateError(ValueError):
    """A template gw cannot compile; the message names the construct and its position."""


class ExpressionParser:
    """Parses one expression at a time (`expression_of`); `where` names it in errors."""

    def __init__(self, pointer: bool) -> None:
        self.pointer = pointer
        self.calls: set[str] = set()
        self.variables: set[str] = set()
        self.scopes: list[set[str]] = [set()]
        self.tokens: list[tuple[str, str]] = []
        self.where = ""

    def expression_of(self, source: str) -> ir.Expr:
        self.tokens = _tokens(source, self.where)
        if not self.tokens:
            raise TemplateError(f"{self.where}: empty expression")
        expr = self.disjunction()
        if self.tokens:
            raise TemplateError(f"{self.where}: unexpected {self.tokens[0][1]!r}")
        return expr

    def peek(self, *values: str) -> bool:
        return (
            bool(self.tokens) and self.tokens[0][1] in values and self.tokens[0][0] in ("op", "id")
        )

    def take(self, value: str) -> None:
        if not self.peek(value):
            got = repr(self.tokens[0][1]) if self.tokens else "the end"
            raise TemplateError(f"{self.where}: expected {value!r}, found {got}")
        self.tokens.pop(0)

    def disjunction(self) -> ir.Expr:
        left = self.conjunction()
        while self.peek("or"):
            self.tokens.pop(0)
            left = ir.Op(op="or", operands=(left, self.conjunction()))
        return left

    def conjunction(self) -> ir.Expr:
        left = self.negation()
        while self.peek("and"):
            self.tokens.pop(0)
            left = ir.Op(op="and", operands=(left, self.negation()))
        return left

    def negation(self) -> ir.Expr:
        if self.peek("not"):
            self.tokens.pop(0)
            return ir.Op(op="not", operands=(self.negation(),))
        left = self.pipe()
        while self.peek(*_COMPARE, "in"):
            op = self.tokens.pop(0)[1]
            left = ir.Op(op=op, operands=(left, self.pipe()))
        return left

    def pipe(self) -> ir.Expr:
        left = self.binary(0)
        while self.peek("|"):
            self.tokens.pop(0)
            if not self.tokens or self.tokens[0][0] != "id":
                raise TemplateError(f"{self.where}: a function name must follow |")
            name = self.tokens.pop(0)[1]
            args = self.arguments() if self.peek("(") else []
            left = self.call(name, [left, *args])
        return left

    def binary(self, level: int) -> ir.Expr:
        ops = (("+", "-"), ("*", "/", "%"), ("^",))
        if level == len(ops):
            return self.unary()
        left = self.binary(level + 1)
        while self.tokens and self.tokens[0][0] == "op" and self.tokens[0][1] in ops[level]:
            op = self.tokens.pop(0)[1]
            left = ir.Op(op=op, operands=(left, self.binary(level + 1)))
        return left

    def unary(self) -> ir.Expr:
        if self.peek("-"):
            self.tokens.pop(0)
            return ir.Op(op="neg", operands=(self.unary(),))
        return self.primary()

    def primary(self) -> ir.Expr:
        if not self.tokens:
            raise TemplateError(f"{self.where}: the expression ends too early")
        kind, value = self.tokens.pop(0)
        if kind == "num":
            number = float(value)
            return ir.Literal(literal=int(value) if re.fullmatch(r"\d+", value) else number)
        if kind == "str":
            return ir.Literal(literal=_string(value, self.where))
        if value == "(":
            inner = self.disjunction()
            self.take(")")
            return inner
        if kind != "id" or value in ("and", "or", "not", "in"):
            raise TemplateError(f"{self.where}: unexpected {value!r}")
        if value in ("true", "false", "null"):
            return ir.Literal(literal={"true": True, "false": False, "null": None}[value])
        if self.peek("("):
            return self.call(value, self.arguments())
        return self.variable(value)

    def arguments(self) -> list[ir.Expr]:
        self.take("(")
        args: list[ir.Expr] = []
        while not self.peek(")"):
            if args:
                self.take(",")
            args.append(self.disjunction())
        self.take(")")
        return args

    def call(self, name: str, args: list[ir.Expr]) -> ir.Call:
        if name in _REFUSED:
            raise TemplateError(
                f"{self.where}: function {name}() is not supported: {_REFUSED[name]}"
            )
        if name not in FUNCTIONS:
            raise TemplateError(f"{self.where}: unknown function {name}()")
        least, most = FUNCTIONS[name]
        if not least <= len(args) <= most:
            wanted = str(least) if least == most else f"{least} to {most}"
            raise TemplateError(
                f"{self.where}: {name}() takes {wanted} argument(s), not {len(args)}"
            )
        self.calls.add(name)
        return ir.Call(call=name, args=tuple(args))

    def variable(self, name: str) -> ir.Var:
        if self.pointer and "/" in name:
            path = tuple(p for p in name.split("/") if p)
        else:
            path = tuple(name.split("."))
        if not all(path):
            raise TemplateError(f"{self.where}: {name!r} is not a valid variable name")
        if not any(path[0] in scope for scope in self.scopes):
            self.variables.add(path[0])
        return ir.Var(var=path)


def _tokens(source: str, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while source[at:].strip():
        found = _TOKEN.match(source, at)
        if found is None or found.end() == at:
            rest = source[at:].strip()
            raise TemplateError(f"{where}: cannot read {rest[:20]!r}")
        kind = found.lastgroup or ""
        out.append((kind, found.group(kind)))
        at = found.end()
    return out


def _string(token: str, where: str) -> str:
    if token.startswith("'"):
        token = '"' + token[1:-1].replace('\\"', '"').replace('"', '\\"') + '"'
    try:
        value = json.loads(token)
    except ValueError:
        raise TemplateError(f"{where}: invalid string {token}") from None
    assert isinstance(value, str)
    return value
