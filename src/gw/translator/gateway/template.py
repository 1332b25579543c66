"""The template language of transformations (the established gateway's: Inja) → the
template tree of the IR (`ir.template`), which stage 2 compiles to Lua.

Supported: `{{ expr }}`, `{% if %}` / `{% else if %}` / `{% else %}` / `{% endif %}`,
`{% for x in list %}` and `{% for k, v in object %}` with `loop.index` (and `index1`,
`is_first`, `is_last`), `{% set x = expr %}`, `{# comments #}`, `{%-`/`-%}` trimming;
expressions with literals, variables (`a.b.0`, or JSON pointers `a/b` with advanced
templates), `not and or == != < <= > >= in + - * / % ^`, calls and `x | f(y)`.
Anything else fails here with `TemplateError`, naming the construct and where it is, so
that the translator reports it on the field instead of Envoy failing at run time.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass

from gw.translator import ir
from gw.translator.gateway.template_expr import FUNCTIONS, ExpressionParser, TemplateError

__all__ = ["FUNCTIONS", "Parsed", "TemplateError", "parse_template", "walk"]

_OPEN = re.compile(r"\{\{-?|\{%-?|\{#")


@dataclass(frozen=True, slots=True)
class Parsed:
    nodes: tuple[ir.Node, ...]
    #: Every function the template calls.
    calls: frozenset[str]
    #: Every top-level variable the template reads (without loop and `set` variables).
    variables: frozenset[str]
    #: The literal texts of the template, in order.
    texts: tuple[str, ...] = ()
    #: The extractors it names in `extraction("...")`, in order.
    extractions: tuple[str, ...] = ()


@functools.lru_cache(maxsize=1024)
def parse_template(text: str, *, pointer: bool = False) -> Parsed:
    """`pointer`: variables are JSON pointers (`a/b`), as with `advancedTemplates`.

    Kept per text (what raises is not kept): hosts and routes that share options parse
    the same templates, a few hundred microseconds each."""
    parser = _Parser(text, pointer)
    nodes, end = parser.block(())
    if end is not None:
        raise TemplateError(f"{{% {end} %}} without a matching opening statement")
    every = list(walk(tuple(nodes)))
    return Parsed(
        tuple(nodes),
        frozenset(parser.calls),
        frozenset(parser.variables),
        texts=tuple(n.text for n in every if isinstance(n, ir.Text)),
        extractions=tuple(
            n.args[0].literal
            for n in every
            if isinstance(n, ir.Call)
            and n.call == "extraction"
            and isinstance(n.args[0], ir.Literal)
            and isinstance(n.args[0].literal, str)
        ),
    )


class _Parser(ExpressionParser):
    def __init__(self, text: str, pointer: bool) -> None:
        super().__init__(pointer)
        self.text, self.at = text, 0

    def block(self, ends: tuple[str, ...]) -> tuple[list[ir.Node], str | None]:
        """Nodes up to a statement in `ends` (returned, its text), or to the end."""
        nodes: list[ir.Node] = []
        while self.at < len(self.text):
            found = _OPEN.search(self.text, self.at)
            start = found.start() if found else len(self.text)
            literal = self.text[self.at : start]
            if found and found.group().endswith("-"):
                literal = literal.rstrip()
            if literal:
                nodes.append(ir.Text(text=literal))
            if found is None:
                self.at = len(self.text)
                break
            kind = found.group()[:2]
            closing = {"{{": "}}", "{%": "%}", "{#": "#}"}[kind]
            stop = self.text.find(closing, found.end())
            if stop < 0:
                raise TemplateError(
                    f"{kind} at {self._pos(found.start())} is not closed with {closing}"
                )
            inner = self.text[found.end() : stop]
            trim_after = inner.endswith("-") and kind != "{#"
            self.at = stop + 2
            if trim_after:
                inner = inner[:-1]
                self.at = len(self.text) - len(self.text[self.at :].lstrip())
            self.where = f"{kind}{inner}{closing} at {self._pos(found.start())}"
            if kind == "{{":
                nodes.append(ir.Output(output=self.expression_of(inner)))
            elif kind == "{%":
                statement = inner.strip()
                word = statement.split(None, 1)[0] if statement else ""
                if statement in ends or word in ends:
                    return nodes, statement
                nodes.append(self.statement(statement))
        return nodes, None

    def statement(self, statement: str) -> ir.Node:
        word, _, rest = statement.partition(" ")
        if word == "if":
            return self.conditional(rest)
        if word == "for":
            return self.loop(rest)
        if word == "set":
            name, eq, value = rest.partition("=")
            if not eq or not re.fullmatch(r"\s*[A-Za-z_]\w*\s*", name):
                raise TemplateError(f"{self.where}: write {{% set name = expression %}}")
            self.scopes[-1].add(name.strip())
            return ir.Set(assign=name.strip(), value=self.expression_of(value))
        if word in ("else", "endif", "endfor", "elif"):
            raise TemplateError(
                f"{self.where}: {{% {word} %}} without a matching opening statement"
            )
        raise TemplateError(
            f"{self.where}: statement {{% {word} %}} is not supported; gw templates take "
            "{% if %}, {% else if %}, {% else %}, {% for %} and {% set %}"
        )

    def conditional(self, condition: str) -> ir.If:
        opened = self.where
        branches = []
        current: ir.Expr | None = self.expression_of(condition)
        while True:
            body, end = self.block(("else", "elif", "endif"))
            branches.append(ir.Branch(condition=current, body=tuple(body)))
            if end is None:
                raise TemplateError(f"{opened}: {{% if %}} is not closed with {{% endif %}}")
            if end == "endif":
                return ir.If(branches=tuple(branches))
            if current is None:
                raise TemplateError(
                    f"{self.where}: nothing may follow {{% else %}} but {{% endif %}}"
                )
            rest = end.partition(" ")[2].strip()
            if end.startswith("elif") or rest.startswith("if "):
                current = self.expression_of(rest[3:] if rest.startswith("if ") else rest)
            elif rest:
                raise TemplateError(
                    f"{self.where}: write {{% else if condition %}} or {{% else %}}"
                )
            else:
                current = None

    def loop(self, header: str) -> ir.For:
        opened = self.where
        found = re.fullmatch(
            r"\s*([A-Za-z_]\w*)\s*(?:,\s*([A-Za-z_]\w*)\s*)?in\s+(.+)", header, re.S
        )
        if found is None:
            raise TemplateError(
                f"{self.where}: write {{% for x in list %}} or {{% for k, v in object %}}"
            )
        names = tuple(n for n in found.group(1, 2) if n)
        iterable = self.expression_of(found.group(3))
        self.scopes.append({*names, "loop"})
        body, end = self.block(("endfor",))
        self.scopes.pop()
        if end is None:
            raise TemplateError(f"{opened}: {{% for %}} is not closed with {{% endfor %}}")
        return ir.For(loop=names, iterable=iterable, body=tuple(body))

    def _pos(self, offset: int) -> str:
        line = self.text.count("\n", 0, offset) + 1
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return f"{line}:{column}"


def walk(tree: object) -> Iterator[object]:
    """Every node of a template tree (statements and expressions), depth first."""
    if isinstance(tree, tuple):
        for item in tree:
            yield from walk(item)
    elif is_dataclass(tree):
        yield tree
        for field in fields(tree):
            yield from walk(getattr(tree, field.name))
