"""Request transformations: values taken from headers with RE2 regexes and headers rendered
from templates, in two stages (before authentication and after it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractorRef:
    """A template part: the value of the named extractor of the same stage."""

    extractor: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeaderRef:
    """A template part: the value of a request header as it is at this stage."""

    header: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Extractor:
    """A value taken from a request header with an RE2 regex (REFERENCE.md §6.2).

    `extract`: the regex must match the whole value; the value is group `subgroup`, or empty
    when the header is missing or the regex does not match. `single_replace`: when the regex
    matches the whole value, the value becomes `replacement` (only group 0 is supported).
    `replace_all`: every match is replaced. Both replace modes leave a non-matching value
    unchanged. `replacement` is literal text and capture-group numbers.
    """

    name: str
    header: str
    regex: str
    subgroup: int = 0
    mode: Literal["extract", "single_replace", "replace_all"] = "extract"
    replacement: tuple[str | int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderTemplate:
    """A header whose value is literal text and references, rendered per request."""

    name: str
    parts: tuple[str | ExtractorRef | RequestHeaderRef, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Transformation:
    """One stage's request transformation, applied in this order: `headers_to_remove`,
    then `headers` (each replaces any header of that name; an empty result leaves none),
    then `headers_to_append`. Extractors read the request as it entered the stage."""

    extractors: tuple[Extractor, ...] = ()
    headers_to_remove: tuple[str, ...] = ()
    headers: tuple[HeaderTemplate, ...] = ()
    headers_to_append: tuple[HeaderTemplate, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedTransformations:
    """`early` runs before authentication, `regular` after it (before the router)."""

    early: Transformation | None = None
    regular: Transformation | None = None
