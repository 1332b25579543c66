"""Templates of transformations, parsed: the established gateway's template language
(Inja: `{{ expr }}`, `{% if %}`, `{% for %}`, `{% set %}`) as a tree that stage 2 compiles
to Lua. Stage 1 builds it and has checked every name in it (functions, their arity).

Field names tell the node kinds apart in dumps: `text`, `output`, `branches`, `loop`,
`assign` (statements); `literal`, `var`, `call`, `op` (expressions).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Literal:
    """A JSON literal: a string, a number, true, false or null (None)."""

    literal: str | int | float | bool | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Var:
    """A value of the template's data: the JSON body (and, without advanced templates,
    the extractors), or a loop or `set` variable. `var` is the path of keys (an array
    index is its decimal text)."""

    var: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    call: str
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Op:
    """`op` is one of `or and not == != < <= > >= in + - * / % ^ neg`."""

    op: str
    operands: tuple[Expr, ...]


Expr = Literal | Var | Call | Op


@dataclass(frozen=True, slots=True, kw_only=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Output:
    output: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch:
    condition: Expr | None  # None: the `else` branch
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class If:
    branches: tuple[Branch, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class For:
    """`{% for value in iterable %}` or `{% for key, value in object %}`; the body sees
    `loop.index`, `loop.index1`, `loop.is_first` and `loop.is_last` too."""

    loop: tuple[str, ...]
    iterable: Expr
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Set:
    assign: str
    value: Expr


Node = Text | Output | If | For | Set
