"""`stagedTransformations` (virtual host or route) → `ir.StagedTransformations`.

Everything is checked and parsed here so that stage 2 is mechanical and Envoy never refuses
the result: every regex with RE2 as Envoy compiles it (also in the form stage 2 wraps it
in), every subgroup against the regex's groups, every header name, and every `{{ ... }}` of
a template, which is split into literal text and references. Parts gw does not serve (body
transformations, matchers, response transformations) are refused with a status rather
than ignored: a transformation that silently does not happen is a security hole when it
was meant to overwrite a header.
"""

from __future__ import annotations

import re

from gw.api.transform import (
    RequestMatch,
    RequestResponseTransformations,
    TransformationStages,
    TransformationTemplate,
)
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem, line_break_problem
from gw.translator.gateway.transform_extractors import (
    IDENTIFIER,
    add_literal,
    build_extractor,
    source_header,
)
from gw.translator.reports import ResourceReport

_EXPRESSION = re.compile(r"\{\{(.*?)\}\}|\{%|\{#", re.DOTALL)
_CALL = re.compile(r"""(extraction|header)\(\s*(["'])(.*?)\2\s*\)""")


def build_staged_transformations(
    stages: TransformationStages | None, field: str, report: ResourceReport
) -> ir.StagedTransformations | None:
    """The checked transformations, or None when there are none or some part is bad."""
    if stages is None:
        return None
    errors = len(report.errors)
    early = _stage(stages.early, f"{field}.early", report)
    regular = _stage(stages.regular, f"{field}.regular", report)
    if len(report.errors) != errors:
        return None
    return ir.StagedTransformations(early=early, regular=regular)


def _stage(
    stage: RequestResponseTransformations | None, field: str, report: ResourceReport
) -> ir.Transformation | None:
    """The first request transform wins (without matchers it matches every request); the
    others are checked too, and reported as never applying."""
    if stage is None:
        return None
    if stage.response_transforms:
        report.error(
            f"{field}.responseTransforms",
            "response transformations are not supported by this gw build yet; "
            "use headerManipulation.responseHeadersToAdd and responseHeadersToRemove",
        )
    chosen = None
    for i, entry in enumerate(stage.request_transforms):
        where = f"{field}.requestTransforms[{i}]"
        built = _request_transform(entry, where, report)
        if i == 0:
            chosen = built
        elif stage.request_transforms[0].matcher is None:
            report.warning(
                where,
                "never applies: the first entry of requestTransforms matches every request",
            )
    return chosen


def _request_transform(
    entry: RequestMatch, field: str, report: ResourceReport
) -> ir.Transformation | None:
    if entry.matcher is not None:
        report.error(
            f"{field}.matcher",
            "transformation matchers are not supported by this gw build yet; put the "
            "transformation in the options of a route that has this matcher",
        )
    if entry.clear_route_cache:
        report.error(
            f"{field}.clearRouteCache",
            "clearRouteCache is not supported by this gw build yet: the route is chosen "
            "before transformations run",
        )
    if entry.response_transformation is not None:
        report.error(
            f"{field}.responseTransformation",
            "response transformations are not supported by this gw build yet; "
            "use headerManipulation.responseHeadersToAdd and responseHeadersToRemove",
        )
    request = entry.request_transformation
    if request is None:
        return None
    where = f"{field}.requestTransformation"
    if request.transformation_template is None:
        report.error(where, "set transformationTemplate: it is the transformation gw supports")
        return None
    return _template(request.transformation_template, f"{where}.transformationTemplate", report)


def _template(
    template: TransformationTemplate, field: str, report: ResourceReport
) -> ir.Transformation:
    for name, value in (
        ("body", template.body),
        ("mergeExtractorsToBody", template.merge_extractors_to_body),
    ):
        if value is not None:
            report.error(
                f"{field}.{name}",
                "gw transformations change headers only and never touch the body",
            )
    extractors = []
    for name, extraction in sorted(template.extractors.items()):
        built = build_extractor(name, extraction, f"{field}.extractors.{name}", report)
        if built is not None:
            extractors.append(built)
    known = frozenset(template.extractors)
    advanced = template.advanced_templates
    headers = []
    for name, text in sorted(template.headers.items()):
        built_header = _header(name, text.text, known, advanced, f"{field}.headers.{name}", report)
        if built_header is not None:
            headers.append(built_header)
    appended = []
    for i, entry in enumerate(template.headers_to_append):
        where = f"{field}.headersToAppend[{i}]"
        problem = header_name_problem(entry.key)
        if problem is not None:
            report.error(f"{where}.key", problem)
        parts = parse_template(entry.value.text, known, advanced, f"{where}.value.text", report)
        if problem is None and parts is not None:
            appended.append(ir.HeaderTemplate(name=entry.key.lower(), parts=parts))
    removed = []
    for i, name in enumerate(template.headers_to_remove):
        problem = header_name_problem(name)
        if problem is not None:
            report.error(f"{field}.headersToRemove[{i}]", problem)
        elif name.lower() not in removed:
            removed.append(name.lower())
    return ir.Transformation(
        extractors=tuple(extractors),
        headers_to_remove=tuple(removed),
        headers=tuple(headers),
        headers_to_append=tuple(appended),
    )


def _header(
    name: str, text: str, known: frozenset[str], advanced: bool, field: str, report: ResourceReport
) -> ir.HeaderTemplate | None:
    problem = header_name_problem(name)
    if problem is not None:
        report.error(field, problem)
    parts = parse_template(text, known, advanced, f"{field}.text", report)
    if problem is not None or parts is None:
        return None
    return ir.HeaderTemplate(name=name.lower(), parts=parts)


def parse_template(
    text: str, known: frozenset[str], advanced: bool, field: str, report: ResourceReport
) -> tuple[str | ir.ExtractorRef | ir.RequestHeaderRef, ...] | None:
    """`text` split into literal text and references; None after reporting a problem.

    Supported: `{{ name }}` (spaces optional; with `advancedTemplates` only the next
    form), `{{ extraction("name") }}` and `{{ header("name") }}`.
    """
    problem = line_break_problem(text)
    if problem is not None:
        report.error(field, problem)
        return None
    parts: list[str | ir.ExtractorRef | ir.RequestHeaderRef] = []
    at = 0
    for match in _EXPRESSION.finditer(text):
        add_literal(parts, text[at : match.start()])
        at = match.end()
        if match.group(1) is None:
            report.error(
                field,
                "template statements {% ... %} and comments {# ... #} are not supported; "
                'use {{ name }}, {{ extraction("name") }} or {{ header("name") }}',
            )
            return None
        reference = _reference(match.group(1).strip(), known, advanced, field, report)
        if reference is None:
            return None
        parts.append(reference)
    tail = text[at:]
    if "{{" in tail:
        report.error(field, "a {{ is not closed with }}")
        return None
    add_literal(parts, tail)
    return tuple(parts)


def _reference(
    expression: str, known: frozenset[str], advanced: bool, field: str, report: ResourceReport
) -> ir.ExtractorRef | ir.RequestHeaderRef | None:
    call = _CALL.fullmatch(expression)
    if call is not None and call.group(1) == "header":
        header = source_header(call.group(3), field, report)
        return None if header is None else ir.RequestHeaderRef(header=header)
    if call is not None:
        name = call.group(3)
    elif IDENTIFIER.fullmatch(expression) and not advanced:
        name = expression
    else:
        report.error(
            field,
            f"{{{{ {expression} }}}} is not supported: gw templates take {{{{ name }}}}, "
            '{{ extraction("name") }} and {{ header("name") }}'
            + (" (with advancedTemplates, extraction(...) only)" if advanced else ""),
        )
        return None
    if name not in known:
        defined = ", ".join(sorted(known)) or "none"
        report.error(
            field,
            f"the template uses extractor {name!r}, which is not defined (defined: {defined})",
        )
        return None
    return ir.ExtractorRef(extractor=name)
