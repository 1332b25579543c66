"""Transformations: `transformations` (request, response, clearRouteCache) and
`stagedTransformations` (early and regular stages), as the established gateway spells them.

The shape is the established gateway's; which parts gw serves, and how (Envoy's own
header filters, or a Lua script compiled from the templates), is the translator's business
(`translator/gateway/transform*.py`, `translator/gateway/template.py`, docs/transform.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gw.api.meta import Model


class Empty(Model):
    """A message without fields, written `{}` (`passthrough`, `body` as a source, ...)."""


class InjaTemplate(Model):
    text: str = ""


class Extraction(Model):
    """Where a value comes from (`header` or `body: {}`), the regex applied to it, and
    which capture group (`subgroup`, 0 = the whole match) becomes the extractor's value."""

    header: str | None = None
    body: Empty | None = None
    regex: str | None = None
    subgroup: int = Field(default=0, ge=0)
    mode: Literal["EXTRACT", "SINGLE_REPLACE", "REPLACE_ALL"] = "EXTRACT"
    replacement_text: str | None = None


class HeaderToAppend(Model):
    key: str
    value: InjaTemplate = InjaTemplate()


class DynamicMetadataValue(Model):
    metadata_namespace: str = ""
    key: str = ""
    value: InjaTemplate = InjaTemplate()
    json_to_proto: bool = False


class SpanTransformer(Model):
    name: InjaTemplate = InjaTemplate()


class OverridableTemplate(Model):
    tmpl: InjaTemplate = InjaTemplate()
    override_empty: bool = False


class MergeJsonKeys(Model):
    json_keys: dict[str, OverridableTemplate] = {}


class TransformationTemplate(Model):
    advanced_templates: bool = False
    extractors: dict[str, Extraction] = {}
    headers: dict[str, InjaTemplate] = {}
    headers_to_append: list[HeaderToAppend] = []
    headers_to_remove: list[str] = []
    body: InjaTemplate | None = None
    passthrough: Empty | None = None
    merge_extractors_to_body: Empty | None = None
    merge_json_keys: MergeJsonKeys | None = None
    parse_body_behavior: Literal["ParseAsJson", "DontParse"] | None = None
    ignore_error_on_parse: bool = False
    dynamic_metadata_values: list[DynamicMetadataValue] = []
    escape_characters: bool | None = None
    span_transformer: SpanTransformer | None = None


class HeaderBodyTransform(Model):
    add_request_metadata: bool = False


class Transformation(Model):
    transformation_template: TransformationTemplate | None = None
    header_body_transform: HeaderBodyTransform | None = None
    log_request_response_info: bool | None = None


class HeaderMatcher(Model):
    name: str
    value: str = ""
    regex: bool = False
    invert_match: bool = False


class QueryParameterMatcher(Model):
    name: str
    value: str = ""
    regex: bool = False


class TransformationMatcher(Model):
    """The request match of a transformation entry (the shape of a route's matcher)."""

    prefix: str | None = None
    exact: str | None = None
    regex: str | None = None
    case_sensitive: bool | None = None
    headers: list[HeaderMatcher] = []
    query_parameters: list[QueryParameterMatcher] = []
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
    post_routing: RequestResponseTransformations | None = None
    inherit_transformation: bool = False
    log_request_response_info: bool | None = None
    escape_characters: bool | None = None


class Transformations(Model):
    """`transformations`: one regular-stage entry without a matcher (used when
    `stagedTransformations.regular` is not set)."""

    request_transformation: Transformation | None = None
    clear_route_cache: bool = False
    response_transformation: Transformation | None = None
