"""Regexes → programs for the Pike virtual machine of gw's Lua runtime
(`envoy/transform_runtime.lua`), for transformations that Envoy runs as Lua scripts (Lua
has no regular expressions of its own, and its patterns are not regexes).

Semantics are RE2's as Envoy uses it (byte oriented, leftmost-first, linear time): `.`
matches any byte but `\\n` (any byte with `(?s)`), `$` is the end of the text (of a line
with `(?m)`), `\\s` is `[\\t\\n\\f\\r ]`. The pattern is parsed with Python's own parser
(whose syntax RE2 shares for everything gw accepts) after RE2 has accepted it
(`regex.capture_groups`); what RE2 accepts but this compiler cannot run (Unicode classes,
very large counted repetitions) fails with `RegexError`, naming the construct.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from gw.translator.regex import RegexError

#: Instructions: ("byte", ranges) | ("split", first, second) | ("jmp", to) | ("save", slot)
#: | ("assert", kind) | ("match",). Ranges are flat (low, high, low, high, ...).
Instruction = tuple[Any, ...]
MAX_INSTRUCTIONS = 4000
_WORD = (48, 57, 65, 90, 95, 95, 97, 122)
_DIGIT = (48, 57)
_SPACE = (9, 10, 12, 13, 32, 32)
_CATEGORIES = {
    c.CATEGORY_DIGIT: (_DIGIT, False), c.CATEGORY_NOT_DIGIT: (_DIGIT, True),
    c.CATEGORY_WORD: (_WORD, False), c.CATEGORY_NOT_WORD: (_WORD, True),
    c.CATEGORY_SPACE: (_SPACE, False), c.CATEGORY_NOT_SPACE: (_SPACE, True),
}  # fmt: skip
_ASSERTIONS = {
    c.AT_BEGINNING: "bol", c.AT_BEGINNING_STRING: "bot", c.AT_END: "eol",
    c.AT_END_STRING: "eot", c.AT_BOUNDARY: "wordb", c.AT_NON_BOUNDARY: "nwordb",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Program:
    instructions: tuple[Instruction, ...]
    #: Capture groups (without group 0).
    groups: int


@functools.lru_cache(maxsize=1024)
def compile_program(pattern: str) -> Program:
    """`pattern` as the Lua transformation engine runs it. Kept per pattern (what raises
    is not kept): routes that share options compile the same patterns."""
    try:
        parsed = _parser.parse(pattern.encode("utf-8"), 0)
    except re.error as exc:
        raise RegexError(f"regex {pattern!r} cannot run in a Lua transformation: {exc}") from None
    compiler = _Compiler(pattern, parsed.state.flags)
    compiler.emit(("save", 0))
    compiler.sequence(list(parsed), parsed.state.flags)
    compiler.emit(("save", 1))
    compiler.emit(("match",))
    return Program(tuple(compiler.out), parsed.state.groups - 1)


class _Compiler:
    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.out: list[Instruction] = []

    def emit(self, instruction: Instruction) -> int:
        if len(self.out) >= MAX_INSTRUCTIONS:
            raise RegexError(
                f"regex {self.pattern!r} is too large to run in a Lua transformation "
                "(counted repetitions grow it fast)"
            )
        self.out.append(instruction)
        return len(self.out) - 1

    def patch(self, at: int, instruction: Instruction) -> None:
        self.out[at] = instruction

    def sequence(self, items: list[tuple[Any, Any]], flags: int) -> None:
        for op, arg in items:
            self.item(op, arg, flags)

    def item(self, op: Any, arg: Any, flags: int) -> None:
        if op is c.LITERAL or op is c.NOT_LITERAL:
            self.emit(("byte", _fold((arg, arg), flags), op is c.NOT_LITERAL))
        elif op is c.ANY:
            dotall = bool(flags & re.DOTALL)
            self.emit(("byte", (0, 255) if dotall else (10, 10), not dotall))
        elif op is c.IN:
            ranges, negate = _class(arg, flags)
            self.emit(("byte", ranges, negate))
        elif op is c.SUBPATTERN:
            group, add, remove, inner = arg
            inner_flags = (flags | add) & ~remove
            if group is not None:
                self.emit(("save", 2 * group))
            self.sequence(list(inner), inner_flags)
            if group is not None:
                self.emit(("save", 2 * group + 1))
        elif op is c.BRANCH:
            self.branch(arg[1], flags)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            self.repeat(arg, flags, greedy=op is c.MAX_REPEAT)
        elif op is c.AT:
            kind = _ASSERTIONS[arg]
            if kind in ("bol", "eol") and not flags & re.MULTILINE:
                kind = {"bol": "bot", "eol": "eot"}[kind]
            self.emit(("assert", kind))
        else:
            raise RegexError(
                f"regex {self.pattern!r} uses {str(op).lower()}, which a Lua transformation "
                "cannot run (RE2 has no lookaround or backreferences either)"
            )

    def branch(self, alternatives: list[Any], flags: int) -> None:
        jumps = []
        for index, alternative in enumerate(alternatives):
            if index < len(alternatives) - 1:
                split = self.emit(("split", 0, 0))
                self.sequence(list(alternative), flags)
                jumps.append(self.emit(("jmp", 0)))
                self.patch(split, ("split", split + 1, len(self.out)))
            else:
                self.sequence(list(alternative), flags)
        for jump in jumps:
            self.patch(jump, ("jmp", len(self.out)))

    def repeat(self, arg: Any, flags: int, *, greedy: bool) -> None:
        low, high, inner = arg
        items = list(inner)
        for _ in range(low):
            self.sequence(items, flags)
        if high is c.MAXREPEAT:
            start = self.emit(("split", 0, 0))
            self.sequence(items, flags)
            self.emit(("jmp", start))
            self._split(start, start + 1, len(self.out), greedy)
            return
        pending = []
        for _ in range(high - low):
            split = self.emit(("split", 0, 0))
            pending.append(split)
            self.sequence(items, flags)
        for split in pending:
            self._split(split, split + 1, len(self.out), greedy)

    def _split(self, at: int, body: int, after: int, greedy: bool) -> None:
        self.patch(at, ("split", body, after) if greedy else ("split", after, body))


def _fold(pair: tuple[int, int], flags: int) -> tuple[int, ...]:
    """A byte range, with its other case too under `(?i)` (ASCII letters)."""
    low, high = pair
    out = [low, high]
    if flags & re.IGNORECASE:
        for a, b, shift in ((65, 90, 32), (97, 122, -32)):
            lo, hi = max(low, a), min(high, b)
            if lo <= hi:
                out += [lo + shift, hi + shift]
    return tuple(out)


def _class(items: list[tuple[Any, Any]], flags: int) -> tuple[tuple[int, ...], bool]:
    ranges: list[int] = []
    negate = False
    for op, arg in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            ranges += _fold((arg, arg), flags)
        elif op is c.RANGE:
            ranges += _fold(arg, flags)
        elif op is c.CATEGORY and arg in _CATEGORIES:
            found, inverted = _CATEGORIES[arg]
            ranges += _invert(found) if inverted else found
        else:
            raise RegexError(f"character class item {op} cannot run in a Lua transformation")
    return tuple(ranges), negate


def _invert(ranges: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    at = 0
    for low, high in zip(ranges[::2], ranges[1::2], strict=True):
        if low > at:
            out += [at, low - 1]
        at = high + 1
    if at <= 255:
        out += [at, 255]
    return tuple(out)


_LUA_MAGIC = frozenset(b"^$()%.[]*+-?")


@dataclass(frozen=True, slots=True)
class LuaPattern:
    """`pattern` (anchored) may stand for the regex on texts up to `max_length` bytes."""

    pattern: str
    max_length: int


#: Backtracking steps a Lua pattern may take at worst (each quantifier multiplies them by
#: the text's length): past that, the Pike machine's linear time is the safer bet.
MAX_BACKTRACKING = 1_000_000


def lua_pattern(pattern: str) -> LuaPattern | None:
    """The regex as an anchored Lua pattern with the same full-match result and captures,
    when Lua's patterns can say it exactly (no alternation, counted repetition, repeated
    groups or word boundaries); None otherwise (the Pike machine runs it then).

    Lua's matcher backtracks greedily, leftmost first: for these patterns it finds what
    RE2's leftmost-first semantics find, in C, without the machine's interpretation cost.
    Backtracking is polynomial in the text's length (its power the number of quantifiers),
    so the pattern is only used on texts short enough to bound it.
    """
    try:
        parsed = _parser.parse(pattern.encode("utf-8"), 0)
    except re.error:
        return None
    body = _lua_items(list(parsed), parsed.state.flags)
    if body is None:
        return None
    quantifiers = sum(body.count(q) for q in ("]*", "]+", "]-", "]?", ".*", ".+", ".-"))
    limit = int(MAX_BACKTRACKING ** (1 / quantifiers)) if quantifiers else MAX_BACKTRACKING
    return LuaPattern(f"^{body}$", limit)


def _lua_items(items: list[tuple[Any, Any]], flags: int) -> str | None:
    out = []
    for index, (op, arg) in enumerate(items):
        if op is c.SUBPATTERN:
            group, add, remove, inner = arg
            text = _lua_items(list(inner), (flags | add) & ~remove)
            if text is None:
                return None
            out.append(text if group is None else f"({text})")
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, inner = arg
            single = list(inner)
            quantifier = {(0, True): "*", (1, True): "+", (0, False): "?"}.get(
                (low, high is c.MAXREPEAT)
            )
            if len(single) != 1 or quantifier is None or (high is not c.MAXREPEAT and high != 1):
                return None
            if op is c.MIN_REPEAT:
                if quantifier != "*":
                    return None
                quantifier = "-"
            item = _lua_class(single[0][0], single[0][1], flags)
            if item is None:
                return None
            out.append(item + quantifier)
        elif op is c.AT:
            if arg in (c.AT_BEGINNING_STRING, c.AT_BEGINNING) and index == 0:
                continue  # the pattern is anchored anyway
            if arg in (c.AT_END_STRING, c.AT_END) and index == len(items) - 1:
                continue
            return None
        else:
            item = _lua_class(op, arg, flags)
            if item is None:
                return None
            out.append(item)
    return "".join(out)


def _lua_class(op: Any, arg: Any, flags: int) -> str | None:
    """One byte-matching item as a Lua pattern item."""
    if op is c.ANY:
        return "." if flags & re.DOTALL else "[^\n]"
    if op is c.LITERAL and not flags & re.IGNORECASE:
        return f"%{chr(arg)}" if arg in _LUA_MAGIC else ("%z" if arg == 0 else chr(arg))
    if op in (c.LITERAL, c.NOT_LITERAL):
        ranges, negate = _fold((arg, arg), flags), op is c.NOT_LITERAL
    elif op is c.IN:
        ranges, negate = _class(arg, flags)
    else:
        return None
    covered = {
        b for low, high in zip(ranges[::2], ranges[1::2], strict=True) for b in range(low, high + 1)
    }
    if len(covered) == 256:
        return None if negate else "."
    parts = []
    for low, high in zip(ranges[::2], ranges[1::2], strict=True):
        if low == 0 or high == 0:
            return None  # NUL in a Lua class is not portable
        parts.append(_lua_byte(low) if low == high else f"{_lua_byte(low)}-{_lua_byte(high)}")
    return "[" + ("^" if negate else "") + "".join(parts) + "]"


def _lua_byte(b: int) -> str:
    return f"%{chr(b)}" if chr(b) in "]^-%[" else chr(b)
