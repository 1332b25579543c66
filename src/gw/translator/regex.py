"""RE2, the regex engine Envoy uses: patterns are checked here so that a bad one becomes a
status on the resource, never a NACK from Envoy.

Patterns are compiled the way Envoy 1.40 compiles them (checked against `envoy --mode
validate`): the UTF-8 bytes of the pattern under RE2's Latin-1 option, so that a pattern
Envoy refuses (`\\x{1F600}`) is refused here too and the program size is Envoy's. Envoy
refuses a pattern whose RE2 program is larger than `MAX_PROGRAM_SIZE` (its runtime key
`re2.max_program_size.error_level`, default 100).
"""

from __future__ import annotations

import functools

import re2

MAX_PROGRAM_SIZE = 100

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.encoding = re2.Options.Encoding.LATIN1


class RegexError(ValueError):
    pass


def compile_like_envoy(pattern: str) -> re2._Regexp:
    """`pattern` compiled as Envoy compiles it (match it against UTF-8 bytes); raises
    `re2.error` when RE2 refuses it."""
    return re2.compile(pattern.encode("utf-8"), _OPTIONS)


@functools.lru_cache(maxsize=1024)
def capture_groups(pattern: str) -> int:
    """The number of capture groups in `pattern`; RegexError when Envoy would refuse it.
    Kept per pattern (what raises is not kept): routes that share options check the same
    patterns."""
    try:
        compiled = compile_like_envoy(pattern)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise RegexError(f"invalid regex {pattern!r}: {detail}") from None
    size = int(compiled.programsize)
    if size > MAX_PROGRAM_SIZE:
        raise RegexError(
            f"regex {pattern!r} is too complex: its RE2 program size is {size}, Envoy allows "
            f"{MAX_PROGRAM_SIZE}; simplify it (counted repetitions such as .{{20}} grow fast)"
        )
    return int(compiled.groups)


def program_size(pattern: str) -> int:
    """The size of `pattern`'s RE2 program as Envoy counts it (the pattern must compile)."""
    return int(re2.compile(pattern.encode("utf-8"), _OPTIONS).programsize)


def full_match(pattern: str) -> str:
    """`pattern` anchored at both ends: it must match the whole text."""
    return f"^(?:{pattern})$"


def full_match_or_anything(pattern: str, group: int) -> tuple[str, int]:
    """A pattern that matches any text, and the number of its group that holds group
    `group` of `pattern` when `pattern` matches the whole text (empty otherwise).

    RE2 prefers the first alternative that lets the whole pattern match, so the fallback
    `[\\s\\S]*` is taken only when `pattern` cannot match the whole text. Group 0 gets a
    group of its own; other groups keep their numbers.
    """
    if group == 0:
        return f"^(?:({pattern})|[\\s\\S]*)$", 1
    return f"^(?:{pattern}|[\\s\\S]*)$", group
