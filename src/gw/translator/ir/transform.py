"""Transformations, in two stages (before authentication and after it).

A stage is either `Transformation` (request headers from header regexes and simple
templates: served by Envoy's own header filters) or `TransformationScript` (everything
else: templates, bodies, responses, matchers; compiled to a Lua script in stage 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir.template import Node


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
    """One stage's header transformation, applied in this order: `headers_to_remove`,
    then `headers` (each replaces any header of that name; an empty result leaves none),
    then `headers_to_append`. Extractors read the request as it entered the stage."""

    extractors: tuple[Extractor, ...] = ()
    headers_to_remove: tuple[str, ...] = ()
    headers: tuple[HeaderTemplate, ...] = ()
    headers_to_append: tuple[HeaderTemplate, ...] = ()
    #: The response's, likewise; a `RequestHeaderRef` there is the request header as it was
    #: sent upstream.
    response_headers_to_remove: tuple[str, ...] = ()
    response_headers: tuple[HeaderTemplate, ...] = ()
    response_headers_to_append: tuple[HeaderTemplate, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateExtractor:
    """An extractor of a script: from a request/response header, or the body when
    `header` is None. Modes as `Extractor`; `replacement` is REPLACE_ALL's text with group
    numbers, or SINGLE_REPLACE's literal text (replacing group `subgroup`)."""

    name: str
    header: str | None
    regex: str
    subgroup: int = 0
    mode: Literal["extract", "single_replace", "replace_all"] = "extract"
    replacement: tuple[str | int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderedHeader:
    name: str
    template: tuple[Node, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataValue:
    namespace: str
    key: str
    template: tuple[Node, ...]
    json_to_proto: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class MergedKey:
    """`mergeJsonKeys`: `key` (dotted path) set to the rendered value (parsed as JSON
    when it is JSON); an empty result is skipped unless `override_empty`."""

    key: str
    template: tuple[Node, ...]
    override_empty: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateTransformation:
    """A `transformationTemplate`, applied in the established gateway's order: extractors,
    then the new body is rendered (not yet set), dynamic metadata, `headers` (each replaces
    its header; an empty result leaves none), `headers_to_remove`, `headers_to_append`,
    and last the body is replaced.

    `body`: `keep` (untouched; buffered only when something reads it), `template`,
    `merge_extractors` (the JSON body with the extractors merged in), `merge_json_keys`.
    `parse_json`: the body is parsed as JSON (the default, unless `DontParse`); a body that
    is not JSON answers 400 unless `ignore_parse_errors`."""

    advanced: bool = False
    extractors: tuple[TemplateExtractor, ...] = ()
    headers: tuple[RenderedHeader, ...] = ()
    headers_to_remove: tuple[str, ...] = ()
    headers_to_append: tuple[RenderedHeader, ...] = ()
    body: Literal["keep", "template", "merge_extractors", "merge_json_keys"] = "keep"
    body_template: tuple[Node, ...] = ()
    merged_keys: tuple[MergedKey, ...] = ()
    parse_json: bool = True
    ignore_parse_errors: bool = False
    #: `passthrough`: the body is never buffered (templates see it empty).
    passthrough: bool = False
    dynamic_metadata: tuple[MetadataValue, ...] = ()
    escape_characters: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderBodyTransformation:
    """`headerBodyTransform`: the body becomes `{"headers": {...}, "body": "..."}`, with
    the request's method, path and query string too when `add_request_metadata`."""

    add_request_metadata: bool = False


Step = TemplateTransformation | HeaderBodyTransformation


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchHeader:
    name: str
    value: str = ""  # empty: the header must be present
    regex: bool = False
    invert: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestCondition:
    """When a request entry applies: a path (`prefix`, `exact` or `regex`), headers,
    query parameters (as `MatchHeader`s on parameter names) and methods."""

    path_kind: Literal["prefix", "exact", "regex"] = "prefix"
    path: str = "/"
    case_sensitive: bool = True
    headers: tuple[MatchHeader, ...] = ()
    query: tuple[MatchHeader, ...] = ()
    methods: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRule:
    """The first request rule whose `condition` holds (None: every request) is applied;
    its `response` step, if any, applies to the response."""

    condition: RequestCondition | None = None
    clear_route_cache: bool = False
    request: Step | None = None
    response: Step | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseRule:
    """Consulted when the chosen request rule has no `response`: the first rule whose
    response headers match (and whose `response_code_details` equals the stream's, when
    set) is applied."""

    headers: tuple[MatchHeader, ...] = ()
    response_code_details: str | None = None
    response: Step | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformationScript:
    """A stage that Envoy runs as a Lua script compiled from these rules. `log`: the
    request/response are logged (at debug level) before and after each step."""

    request_rules: tuple[RequestRule, ...] = ()
    response_rules: tuple[ResponseRule, ...] = ()
    log: bool = False


Stage = Transformation | TransformationScript


@dataclass(frozen=True, slots=True, kw_only=True)
class StagedTransformations:
    """`early` runs before authentication, `regular` after it (before the router).
    `span_name`: the tracing span's name (a literal `spanTransformer.name`)."""

    early: Stage | None = None
    regular: Stage | None = None
    span_name: str | None = None
