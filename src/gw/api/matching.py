"""Envoy's matcher and percentage types as the established API spells them: regexes
(`RegexMatcher`, `RegexMatchAndSubstitute`), string matchers, and (runtime) fractional
percentages. Shared by the traffic options (`regexRewrite`, `csrf`, `extProc`, ...)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gw.api.meta import Model


class GoogleRe2(Model):
    #: Deprecated in Envoy; accepted and checked against RE2's own program size.
    max_program_size: int | None = Field(default=None, ge=0)


class RegexMatcher(Model):
    regex: str
    google_re2: GoogleRe2 | None = None


class RegexMatchAndSubstitute(Model):
    """`pattern.regex` replaced by `substitution` (`\\1` names a capture group)."""

    pattern: RegexMatcher
    substitution: str = ""


class StringMatcher(Model):
    """Exactly one of `exact`, `prefix`, `suffix` and `safeRegex`."""

    exact: str | None = None
    prefix: str | None = None
    suffix: str | None = None
    safe_regex: RegexMatcher | None = None
    ignore_case: bool = False


class ListStringMatcher(Model):
    patterns: list[StringMatcher] = []


Denominator = Literal["HUNDRED", "TEN_THOUSAND", "MILLION"]


class FractionalPercent(Model):
    numerator: int = Field(default=0, ge=0)
    denominator: Denominator = "HUNDRED"


class RuntimeFractionalPercent(Model):
    default_value: FractionalPercent
    runtime_key: str = ""
