"""Transformations that Envoy's own header filters can serve → `ir.Transformation`.

A stage qualifies (`is_native`) when it is one entry without a matcher whose request
transformation is header extractors and templates of literal text, extractor values and
request headers that write ordinary headers, and whose response transformation (if any)
writes ordinary response headers from literal text and `request_header()`: the common
cases, served without a script. Everything is checked here so that stage 2 is mechanical
and Envoy never refuses the result: every regex with RE2 as Envoy compiles it (also in the
form stage 2 wraps it in), every subgroup against the regex's groups, every header name.
"""

from __future__ import annotations

from gw.api.transform import RequestMatch, ResponseMatch, Transformation, TransformationTemplate
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem, line_break_problem
from gw.translator.gateway.template import TemplateError, parse_template
from gw.translator.gateway.transform_extractors import (
    IDENTIFIER,
    READABLE_PSEUDO_HEADERS,
    add_literal,
    build_extractor,
    source_header,
)
from gw.translator.reports import ResourceReport

Part = str | ir.ExtractorRef | ir.RequestHeaderRef


def is_native(
    requests: list[tuple[RequestMatch, str]], responses: list[tuple[ResponseMatch, str]]
) -> bool:
    """Whether Envoy's header filters can serve the stage (see the module docstring)."""
    if responses or not requests:
        return False
    entry = requests[0][0]
    if entry.matcher or entry.clear_route_cache:
        return False
    request, response = entry.request_transformation, entry.response_transformation
    if request is None and response is None:
        return False
    request_ok = request is None or _plain(request, response=False)
    return request_ok and (response is None or _plain(response, response=True))


def _plain(t: Transformation, *, response: bool) -> bool:
    template = t.transformation_template
    if template is None or t.header_body_transform or t.log_request_response_info:
        return False
    if (template.body, template.merge_extractors_to_body, template.merge_json_keys) != (
        None,
        None,
        None,
    ):
        return False
    if template.dynamic_metadata_values or template.escape_characters:
        return False
    if response and template.extractors:
        return False
    for name, x in template.extractors.items():
        if x.header is None or x.body is not None or not IDENTIFIER.fullmatch(name):
            return False
        if x.mode == "SINGLE_REPLACE" and x.subgroup:
            return False
        lowered = x.header.lower()
        if lowered.startswith(":") and lowered not in READABLE_PSEUDO_HEADERS:
            return False
    written = [*template.headers, *(h.key for h in template.headers_to_append)]
    if any(name.startswith(":") or name.lower() == "host" for name in written):
        return False
    texts = [v.text for v in template.headers.values()]
    texts += [h.value.text for h in template.headers_to_append]
    return all(_parts(text, template, response) is not None for text in texts)


def _parts(text: str, t: TransformationTemplate, response: bool) -> tuple[Part, ...] | None:
    """Literal text and references, or None when the template needs a script. On requests:
    extractor values and `header()`; on responses: `request_header()` only."""
    try:
        nodes = parse_template(text, pointer=t.advanced_templates).nodes
    except TemplateError:
        return None
    parts: list[Part] = []
    for node in nodes:
        if isinstance(node, ir.Text):
            add_literal(parts, node.text)
            continue
        if not isinstance(node, ir.Output):
            return None
        e = node.output
        if isinstance(e, ir.Var) and not response:
            if t.advanced_templates or len(e.var) != 1 or e.var[0] not in t.extractors:
                return None
            parts.append(ir.ExtractorRef(extractor=e.var[0]))
            continue
        if not (isinstance(e, ir.Call) and isinstance(e.args[0], ir.Literal)):
            return None
        name = e.args[0].literal
        wanted = ("request_header",) if response else ("extraction", "header")
        if e.call not in wanted or not isinstance(name, str):
            return None
        if e.call == "extraction":
            if name not in t.extractors:
                return None
            parts.append(ir.ExtractorRef(extractor=name))
        else:
            lowered = "host" if name.lower() == ":authority" else name.lower()
            if lowered.startswith(":") and lowered not in READABLE_PSEUDO_HEADERS:
                return None
            parts.append(ir.RequestHeaderRef(header=":authority" if lowered == "host" else lowered))
    return tuple(parts)


def build_native(
    request: TransformationTemplate | None,
    response: TransformationTemplate | None,
    field: str,
    report: ResourceReport,
) -> ir.Transformation:
    """`field`: the entry (`...requestTransforms[0]`, or `...transformations`)."""
    out = ir.Transformation()
    if request is not None:
        where = f"{field}.requestTransformation.transformationTemplate"
        extractors = []
        for name, extraction in sorted(request.extractors.items()):
            built = build_extractor(name, extraction, f"{where}.extractors.{name}", report)
            if built is not None:
                extractors.append(built)
        headers, removed, appended = _writes(request, where, False, report)
        out = ir.Transformation(
            extractors=tuple(extractors),
            headers=headers,
            headers_to_remove=removed,
            headers_to_append=appended,
        )
    if response is not None:
        where = f"{field}.responseTransformation.transformationTemplate"
        headers, removed, appended = _writes(response, where, True, report)
        out = ir.Transformation(
            extractors=out.extractors,
            headers=out.headers,
            headers_to_remove=out.headers_to_remove,
            headers_to_append=out.headers_to_append,
            response_headers=headers,
            response_headers_to_remove=removed,
            response_headers_to_append=appended,
        )
    return out


def _writes(
    t: TransformationTemplate, where: str, response: bool, report: ResourceReport
) -> tuple[tuple[ir.HeaderTemplate, ...], tuple[str, ...], tuple[ir.HeaderTemplate, ...]]:
    """The template's `headers`, `headersToRemove` and `headersToAppend`, checked."""
    headers = [
        h
        for name, text in sorted(t.headers.items())
        if (h := _header(name, text.text, t, response, f"{where}.headers.{name}", "text", report))
    ]
    appended = [
        h
        for i, entry in enumerate(t.headers_to_append)
        if (
            h := _header(
                entry.key, entry.value.text, t, response, f"{where}.headersToAppend[{i}]",
                "value.text", report,
            )
        )
    ]  # fmt: skip
    removed: list[str] = []
    for i, name in enumerate(t.headers_to_remove):
        problem = header_name_problem(name)
        if problem is not None:
            report.error(f"{where}.headersToRemove[{i}]", problem)
        elif name.lower() not in removed:
            removed.append(name.lower())
    return tuple(headers), tuple(removed), tuple(appended)


def _header(
    name: str,
    text: str,
    t: TransformationTemplate,
    response: bool,
    field: str,
    leaf: str,
    report: ResourceReport,
) -> ir.HeaderTemplate | None:
    name_problem = header_name_problem(name)
    if name_problem is not None:
        report.error(field, name_problem)
        return None
    text_problem = line_break_problem(text)
    if text_problem is not None:
        report.error(f"{field}.{leaf}", text_problem)
        return None
    parts = _parts(text, t, response)
    assert parts is not None  # is_native checked it
    for part in parts:
        if isinstance(part, ir.RequestHeaderRef):
            source_header(part.header, f"{field}.{leaf}", report)
    return ir.HeaderTemplate(name=name.lower(), parts=parts)
