"""`stagedTransformations`: regex extractors and templated headers (SPEC.md capability 8).

The shape is the established gateway's (REFERENCE.md §6); which parts gw serves, and how,
is the translator's business (`translator/gateway/transform.py`, docs/transform.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from gw.api.meta import Model


class InjaTemplate(Model):
    text: str


class Extraction(Model):
    """Where a value comes from (`header`), the regex applied to it, and which capture
    group (`subgroup`, 0 = the whole match) becomes the extractor's value."""

    header: str | None = None
    body: dict[str, Any] | None = None
    regex: str | None = None
    subgroup: int = Field(default=0, ge=0)
    mode: Literal["EXTRACT", "SINGLE_REPLACE", "REPLACE_ALL"] = "EXTRACT"
    replacement_text: str | None = None


class HeaderToAppend(Model):
    key: str
    value: InjaTemplate


class TransformationTemplate(Model):
    advanced_templates: bool = False
    extractors: dict[str, Extraction] = {}
    headers: dict[str, InjaTemplate] = {}
    headers_to_append: list[HeaderToAppend] = []
    headers_to_remove: list[str] = []
    body: InjaTemplate | None = None
    passthrough: dict[str, Any] | None = None
    merge_extractors_to_body: dict[str, Any] | None = None
    parse_body_behavior: Literal["ParseAsJson", "DontParse"] | None = None
    ignore_error_on_parse: bool = False


class Transformation(Model):
    transformation_template: TransformationTemplate | None = None
    log_request_response_info: bool | None = None


class HeaderMatcher(Model):
    name: str
    value: str = ""
    regex: bool = False
    invert_match: bool = False


class TransformationMatcher(Model):
    prefix: str | None = None
    exact: str | None = None
    regex: str | None = None
    headers: list[HeaderMatcher] = []
    methods: list[str] = []


class RequestMatch(Model):
    matcher: TransformationMatcher | None = None
    clear_route_cache: bool = False
    request_transformation: Transformation | None = None
    response_transformation: Transformation | None = None


class ResponseMatch(Model):
    matchers: list[HeaderMatcher] = []
    response_code_details: str | None = None
    response_transformation: Transformation | None = None


class RequestResponseTransformations(Model):
    request_transforms: list[RequestMatch] = []
    response_transforms: list[ResponseMatch] = []


class TransformationStages(Model):
    early: RequestResponseTransformations | None = None
    regular: RequestResponseTransformations | None = None
    inherit_transformation: bool = False
    log_request_response_info: bool | None = None
    escape_characters: bool | None = None
