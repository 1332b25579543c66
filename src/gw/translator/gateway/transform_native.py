"""Request transformations that Envoy's own header filters can serve → `ir.Transformation`.

A stage qualifies (`is_native`) when it is one request transformation of header
extractors and templates made of literal text, extractor values and request headers, that
writes ordinary headers: the common case, served without a script. Everything is checked
here so that stage 2 is mechanical and Envoy never refuses the result: every regex with RE2
as Envoy compiles it (also in the form stage 2 wraps it in), every subgroup against the
regex's groups, every header name, and every `{{ ... }}` of a template, which is split into
literal text and references.
"""

from __future__ import annotations

import re

from gw.api.transform import RequestMatch, ResponseMatch, TransformationTemplate
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

_EXPRESSION = re.compile(r"\{\{(.*?)\}\}|\{%|\{#", re.DOTALL)
_CALL = re.compile(r"""(extraction|header)\(\s*(["'])(.*?)\2\s*\)""")


def is_native(
    requests: list[tuple[RequestMatch, str]], responses: list[tuple[ResponseMatch, str]]
) -> bool:
    """Whether Envoy's header filters can serve the stage (see the module docstring)."""
    if responses or not requests:
        return False
    entry = requests[0][0]
    request = entry.request_transformation
    if entry.matcher or entry.clear_route_cache or entry.response_transformation or request is None:
        return False
    t = request.transformation_template
    if t is None or request.header_body_transform or request.log_request_response_info:
        return False
    if (t.body, t.merge_extractors_to_body, t.merge_json_keys) != (None, None, None):
        return False
    if t.dynamic_metadata_values or t.escape_characters:
        return False
    for name, x in t.extractors.items():
        if x.header is None or x.body is not None or not IDENTIFIER.fullmatch(name):
            return False
        if x.mode == "SINGLE_REPLACE" and x.subgroup:
            return False
        lowered = x.header.lower()
        if lowered.startswith(":") and lowered not in READABLE_PSEUDO_HEADERS:
            return False
    written = [*t.headers, *(h.key for h in t.headers_to_append)]
    if any(name.startswith(":") or name.lower() == "host" for name in written):
        return False
    texts = [v.text for v in t.headers.values()] + [h.value.text for h in t.headers_to_append]
    return all(_simple(text, t) for text in texts)


def _simple(text: str, t: TransformationTemplate) -> bool:
    """Literal text, extractor values and request headers only."""
    try:
        nodes = parse_template(text, pointer=t.advanced_templates).nodes
    except TemplateError:
        return False
    for node in nodes:
        if isinstance(node, ir.Text):
            continue
        if not isinstance(node, ir.Output):
            return False
        e = node.output
        if isinstance(e, ir.Var):
            if t.advanced_templates or len(e.var) != 1 or e.var[0] not in t.extractors:
                return False
        elif not (
            isinstance(e, ir.Call)
            and e.call in ("extraction", "header")
            and isinstance(e.args[0], ir.Literal)
            and isinstance(e.args[0].literal, str)
            and (e.call == "header" or e.args[0].literal in t.extractors)
        ):
            return False
    return True


def build_native(
    template: TransformationTemplate, field: str, report: ResourceReport
) -> ir.Transformation:
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
        parts = parse_parts(entry.value.text, known, advanced, f"{where}.value.text", report)
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
    parts = parse_parts(text, known, advanced, f"{field}.text", report)
    if problem is not None or parts is None:
        return None
    return ir.HeaderTemplate(name=name.lower(), parts=parts)


def parse_parts(
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
