"""The regex forms stage 2 serves to Envoy keep the established extractor semantics."""

from __future__ import annotations

from typing import Any

import pytest
import re2
from hypothesis import given
from hypothesis import strategies as st

from gw.translator.regex import RegexError, capture_groups, full_match_or_anything
from gw.translator.regex_program import compile_program

_LATIN1 = re2.Options()
_LATIN1.encoding = re2.Options.Encoding.LATIN1

PATTERNS = [
    (r"a(b*)", 1),
    (r"(a|ab)(b*)", 2),
    (r"(a|ab)(b*)", 0),
    (r".*=(\w*)", 1),
    (r"(x)?a", 1),
    (r"[ab]+", 0),
    (r"(?i)(A)B", 1),
]


def _compile(pattern: str) -> Any:
    return re2.compile(pattern.encode(), _LATIN1)


@given(st.text(alphabet="ab=;-xAB", max_size=12), st.sampled_from(PATTERNS))
def test_full_match_or_anything_yields_the_group_of_a_whole_match_else_nothing(
    value: str, case: tuple[str, int]
) -> None:
    """As Envoy's header_to_metadata applies it (a global replace with `\\N`)."""
    pattern, group = case
    match = _compile(pattern).fullmatch(value.encode())
    expected = (match.group(group) or b"") if match else b""
    served, served_group = full_match_or_anything(pattern, group)
    assert _compile(served).sub(rb"\%d" % served_group, value.encode()) == expected


def test_patterns_are_checked_as_envoy_compiles_them() -> None:
    assert capture_groups(r"(a)(?:b)(c)") == 2
    assert capture_groups("ä(ö)") == 1


@pytest.mark.parametrize("pattern", [r"\x{1F600}", "a{1,1000}", "(?=a)", "(a"])
def test_patterns_envoy_refuses_are_refused(pattern: str) -> None:
    """Envoy 1.40 compiles Latin-1 (no code points above 255) and caps program size at 100."""
    with pytest.raises(RegexError):
        capture_groups(pattern)


def test_patterns_are_checked_once_each() -> None:
    """Routes that share options check the same patterns: kept per pattern; a refused one
    is not kept, and raises every time."""
    capture_groups.cache_clear()
    compile_program.cache_clear()
    assert capture_groups("(a)(b)") == 2 and capture_groups("(a)(b)") == 2
    assert compile_program("(a)b") is compile_program("(a)b")
    for _ in range(2):
        with pytest.raises(RegexError):
            capture_groups("(a")
    assert capture_groups.cache_info().hits == 1 and capture_groups.cache_info().currsize == 1
    assert compile_program.cache_info().currsize == 1
