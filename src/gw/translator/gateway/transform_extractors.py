"""Extractors of a transformation template → `ir.Extractor`, checked as Envoy will run them.

Each regex is compiled with RE2 the way Envoy compiles it, alone and in the form stage 2
serves it (anchored, with a fallback so that a value that does not match yields nothing),
and each subgroup or `$n` reference is checked against the regex's capture groups.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from gw.api.transform import Extraction
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem, line_break_problem
from gw.translator.regex import RegexError, capture_groups, full_match, full_match_or_anything
from gw.translator.reports import ResourceReport

#: RE2 rewrites name groups \0 to \9 only.
MAX_GROUP = 9
READABLE_PSEUDO_HEADERS = frozenset({":path", ":method", ":authority", ":scheme"})
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_GROUP_REFERENCE = re.compile(r"\$(\$|&|`|'|\d)")
_MODES: dict[str, Literal["extract", "single_replace", "replace_all"]] = {
    "EXTRACT": "extract",
    "SINGLE_REPLACE": "single_replace",
    "REPLACE_ALL": "replace_all",
}


def build_extractor(
    name: str, extraction: Extraction, field: str, report: ResourceReport
) -> ir.Extractor | None:
    errors = len(report.errors)
    if not IDENTIFIER.fullmatch(name):
        report.error(
            field,
            f"extractor name {name!r} must be an identifier (letters, digits and _, not "
            "starting with a digit) so that templates can refer to it as {{ name }}",
        )
    if extraction.body is not None:
        report.error(f"{field}.body", "gw extracts from headers only, never from the body")
    header = source_header(extraction.header, f"{field}.header", report)
    mode = _MODES[extraction.mode]
    groups = _regex_groups(extraction.regex, f"{field}.regex", report)
    replacement = _replacement(extraction, mode, groups, field, report)
    if groups is not None:
        _check_subgroup(extraction.subgroup, mode, groups, f"{field}.subgroup", report)
    if len(report.errors) != errors or header is None or extraction.regex is None:
        return None
    built = ir.Extractor(
        name=name,
        header=header,
        regex=extraction.regex,
        subgroup=extraction.subgroup,
        mode=mode,
        replacement=replacement,
    )
    _check_served_pattern(built, f"{field}.regex", report)
    return built if len(report.errors) == errors else None


def source_header(name: str | None, field: str, report: ResourceReport) -> str | None:
    """The header to read; `host` is Envoy's `:authority`."""
    if not name:
        report.error(field, "set header: the name of the request header to read")
        return None
    lowered = name.lower()
    if lowered == "host":
        return ":authority"
    if lowered.startswith(":"):
        if lowered in READABLE_PSEUDO_HEADERS:
            return lowered
        allowed = ", ".join(sorted(READABLE_PSEUDO_HEADERS))
        report.error(field, f"{name!r} is not a pseudo-header gw can read; use one of {allowed}")
        return None
    problem = header_name_problem(name)
    if problem is not None:
        report.error(field, problem)
        return None
    return lowered


def _regex_groups(regex: str | None, field: str, report: ResourceReport) -> int | None:
    if not regex:
        report.error(field, "set regex (.* takes the whole value)")
        return None
    try:
        return capture_groups(regex)
    except RegexError as exc:
        report.error(field, str(exc))
        return None


def _check_subgroup(
    subgroup: int, mode: str, groups: int, field: str, report: ResourceReport
) -> None:
    if mode != "extract" and subgroup != 0:
        detail = (
            "gw replaces the whole value in mode SINGLE_REPLACE; use REPLACE_ALL with $1-style "
            "references to keep parts of it"
            if mode == "single_replace"
            else "mode REPLACE_ALL replaces whole matches: leave subgroup unset (0)"
        )
        report.error(field, f"subgroup {subgroup} is not supported: {detail}")
    elif subgroup > groups:
        report.error(
            field,
            f"subgroup {subgroup} is beyond the regex's {groups} capture group(s); "
            "0 is the whole match",
        )
    elif subgroup > MAX_GROUP:
        report.error(field, f"subgroup {subgroup} is above {MAX_GROUP}, the highest gw supports")


def _replacement(
    extraction: Extraction, mode: str, groups: int | None, field: str, report: ResourceReport
) -> tuple[str | int, ...]:
    text = extraction.replacement_text
    where = f"{field}.replacementText"
    if mode == "extract":
        if text is not None:
            report.error(where, "replacementText is only for modes SINGLE_REPLACE and REPLACE_ALL")
        return ()
    if text is None:
        report.error(where, f"mode {extraction.mode} needs replacementText")
        return ()
    problem = line_break_problem(text)
    if problem is not None:
        report.error(where, problem)
        return ()
    if mode == "single_replace":
        return (text,) if text else ()
    return group_references(text, groups, where, report)


def group_references(
    text: str, groups: int | None, field: str, report: ResourceReport
) -> tuple[str | int, ...]:
    """REPLACE_ALL's text: `$1`..`$9` and `$&` (or `$0`) insert groups, `$$` is a `$`."""
    parts: list[str | int] = []
    at = 0
    for match in _GROUP_REFERENCE.finditer(text):
        add_literal(parts, text[at : match.start()])
        at = match.end()
        token = match.group(1)
        if token == "$":
            add_literal(parts, "$")
        elif token in ("`", "'"):
            report.error(field, f"${token} is not supported; use $& and $1 to $9")
        else:
            group = 0 if token == "&" else int(token)
            if groups is not None and group > groups:
                report.error(field, f"${group} refers to a group the regex does not have")
            parts.append(group)
    add_literal(parts, text[at:])
    return tuple(parts)


def _check_served_pattern(extractor: ir.Extractor, field: str, report: ResourceReport) -> None:
    """The regex as Envoy will get it (anchored, with a fallback) must also be acceptable."""
    if extractor.mode == "extract":
        served, _ = full_match_or_anything(extractor.regex, extractor.subgroup)
    elif extractor.mode == "single_replace":
        served = full_match(extractor.regex)
    else:
        return
    try:
        capture_groups(served)
    except RegexError as exc:
        report.error(field, f"as gw serves it ({served!r}): {exc}")


def add_literal(parts: list[Any], text: str) -> None:
    """Append literal text, merged with a literal just before it."""
    if not text:
        return
    last = parts[-1] if parts else None
    if isinstance(last, str):
        parts[-1] = last + text
    else:
        parts.append(text)
