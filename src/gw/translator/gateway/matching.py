"""The established API's matcher and percentage types → IR, checked: percentages within
0–100, regexes as Envoy's RE2 compiles them, substitutions naming groups that exist, string
matchers with exactly one pattern. Shared by the traffic options."""

from __future__ import annotations

import re

from gw.api.matching import (
    FractionalPercent,
    RegexMatchAndSubstitute,
    RuntimeFractionalPercent,
    StringMatcher,
)
from gw.translator import ir
from gw.translator.regex import MAX_PROGRAM_SIZE, RegexError, capture_groups, program_size
from gw.translator.reports import ResourceReport

_DENOMINATORS: dict[str, int] = {"HUNDRED": 100, "TEN_THOUSAND": 10_000, "MILLION": 1_000_000}
_GROUP_REFERENCE = re.compile(r"\\(\d)")


def per_million(value: float) -> ir.Fraction:
    """A percentage (0.0 to 100.0, four decimals kept) as a fraction of a million."""
    return ir.Fraction(numerator=round(value * 10_000), denominator=1_000_000)


def percentage(value: float | None, field: str, report: ResourceReport) -> ir.Fraction | None:
    """A percentage (0.0 to 100.0) as a fraction of a million; None after an error."""
    if value is None:
        return None
    if not 0.0 <= value <= 100.0:
        report.error(field, f"percentage must be between 0 and 100, received {value:g}")
        return None
    return per_million(value)


def fraction(
    value: RuntimeFractionalPercent | FractionalPercent, field: str, report: ResourceReport
) -> ir.Fraction | None:
    """A (runtime) fractional percent; None after an error (a numerator above its
    denominator)."""
    runtime_key = value.runtime_key if isinstance(value, RuntimeFractionalPercent) else ""
    share = value.default_value if isinstance(value, RuntimeFractionalPercent) else value
    denominator = _DENOMINATORS[share.denominator]
    if share.numerator > denominator:
        where = f"{field}.defaultValue" if runtime_key or share is not value else field
        report.error(
            f"{where}.numerator",
            f"{share.numerator} is more than the denominator {share.denominator} "
            f"({denominator}): a share cannot exceed 100%",
        )
        return None
    return ir.Fraction(
        numerator=share.numerator,
        denominator=denominator,  # type: ignore[arg-type]
        runtime_key=runtime_key,
    )


def regex(pattern: str, field: str, report: ResourceReport, max_size: int | None = None) -> int:
    """The number of capture groups of `pattern`; -1 after an error (RE2 refuses it, or its
    program is larger than `max_size` or Envoy's limit)."""
    try:
        groups = capture_groups(pattern)
    except RegexError as exc:
        report.error(field, str(exc))
        return -1
    if max_size is not None and max_size < MAX_PROGRAM_SIZE:
        if program_size(pattern) > max_size:
            report.error(
                field, f"regex {pattern!r} is larger than googleRe2.maxProgramSize {max_size}"
            )
            return -1
    return groups


def regex_rewrite(
    rewrite: RegexMatchAndSubstitute, field: str, report: ResourceReport
) -> ir.RegexRewrite | None:
    """A regex and its substitution, each group the substitution names existing."""
    pattern = rewrite.pattern
    if not pattern.regex:
        report.error(f"{field}.pattern.regex", "the regex is empty")
        return None
    max_size = pattern.google_re2.max_program_size if pattern.google_re2 else None
    groups = regex(pattern.regex, f"{field}.pattern.regex", report, max_size)
    if groups < 0:
        return None
    for reference in _GROUP_REFERENCE.findall(rewrite.substitution):
        if int(reference) > groups:
            report.error(
                f"{field}.substitution",
                f"\\{reference} names capture group {reference}, but the regex has {groups}",
            )
            return None
    return ir.RegexRewrite(regex=pattern.regex, substitution=rewrite.substitution)


def string_match(
    matcher: StringMatcher, field: str, report: ResourceReport
) -> ir.StringMatch | None:
    kinds = [
        (kind, value)
        for kind, value in (
            ("exact", matcher.exact),
            ("prefix", matcher.prefix),
            ("suffix", matcher.suffix),
            ("regex", matcher.safe_regex.regex if matcher.safe_regex else None),
        )
        if value is not None
    ]
    if len(kinds) != 1:
        report.error(
            field, "a string matcher needs exactly one of exact, prefix, suffix and safeRegex"
        )
        return None
    kind, value = kinds[0]
    if kind in ("prefix", "suffix") and not value:
        report.error(f"{field}.{kind}", f"{kind} may not be empty")
        return None
    if kind == "regex" and regex(value, f"{field}.safeRegex.regex", report) < 0:
        return None
    return ir.StringMatch(kind=kind, value=value, ignore_case=matcher.ignore_case)  # type: ignore[arg-type]
