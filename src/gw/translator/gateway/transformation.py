"""Transformations that Envoy runs as Lua scripts → `ir.TransformationScript`.

Everything the established gateway's transformation filter does that Envoy's own header
filters cannot (templates with statements and functions, bodies, JSON, responses,
matchers, clearRouteCache, dynamic metadata, headerBodyTransform) is checked here and
handed to stage 2 as rules whose templates are parsed trees: every regex is compiled the
way the script will run it, every template parsed, every name checked, so that a
mistake is a status on the resource naming the field, never a script that fails in Envoy.
"""

from __future__ import annotations

from dataclasses import dataclass

from gw.api.transform import (
    HeaderMatcher,
    RequestMatch,
    ResponseMatch,
    Transformation,
    TransformationMatcher,
)
from gw.translator import ir
from gw.translator.gateway.transformation_template import TemplateBuilder, check_regex
from gw.translator.reports import ResourceReport


@dataclass(frozen=True, slots=True)
class Defaults:
    """Stage-wide settings a template can override."""

    escape_characters: bool = False
    log: bool = False


def build_rules(
    requests: list[tuple[RequestMatch, str]],
    responses: list[tuple[ResponseMatch, str]],
    defaults: Defaults,
    report: ResourceReport,
) -> ir.TransformationScript:
    """The rules of one stage; `requests`/`responses` are entries with their field paths."""
    request_rules = [_request_rule(entry, where, defaults, report) for entry, where in requests]
    response_rules = []
    for entry, where in responses:
        if entry.response_code_details:
            report.error(
                f"{where}.responseCodeDetails",
                "matching on response code details is not supported: Envoy's Lua filter "
                "cannot read them; match on response headers (e.g. :status) instead",
            )
        response_rules.append(
            ir.ResponseRule(
                headers=tuple(
                    _header_match(m, f"{where}.matchers[{i}]", report)
                    for i, m in enumerate(entry.matchers)
                ),
                response=_response(entry.response_transformation, where, defaults, report),
            )
        )
    logged = defaults.log or any(
        t is not None and t.log_request_response_info
        for entry, _ in requests
        for t in (entry.request_transformation, entry.response_transformation)
    )
    return ir.TransformationScript(
        request_rules=tuple(request_rules), response_rules=tuple(response_rules), log=logged
    )


def _request_rule(
    entry: RequestMatch, where: str, defaults: Defaults, report: ResourceReport
) -> ir.RequestRule:
    condition = None
    if entry.matcher is not None:
        condition = _condition(entry.matcher, f"{where}.matcher", report)
    return ir.RequestRule(
        condition=condition,
        clear_route_cache=entry.clear_route_cache,
        request=_step(
            entry.request_transformation, f"{where}.requestTransformation", True, defaults, report
        ),
        response=_response(entry.response_transformation, where, defaults, report),
    )


def _response(
    t: Transformation | None, where: str, defaults: Defaults, report: ResourceReport
) -> ir.Step | None:
    return _step(t, f"{where}.responseTransformation", False, defaults, report)


def _condition(m: TransformationMatcher, where: str, report: ResourceReport) -> ir.RequestCondition:
    paths = [(k, v) for k, v in (("prefix", m.prefix), ("exact", m.exact), ("regex", m.regex)) if v]
    if len(paths) > 1:
        report.error(where, "set one of prefix, exact and regex")
    kind, path = paths[0] if paths else ("prefix", "/")
    if kind == "regex":
        check_regex(path, f"{where}.regex", report)
    return ir.RequestCondition(
        path_kind=kind,  # type: ignore[arg-type]
        path=path,
        case_sensitive=m.case_sensitive is not False,
        headers=tuple(
            _header_match(h, f"{where}.headers[{i}]", report) for i, h in enumerate(m.headers)
        ),
        query=tuple(
            ir.MatchHeader(name=q.name, value=q.value, regex=q.regex) for q in m.query_parameters
        ),
        methods=tuple(x.upper() for x in m.methods),
    )


def _header_match(m: HeaderMatcher, where: str, report: ResourceReport) -> ir.MatchHeader:
    if m.regex and m.value:
        check_regex(m.value, f"{where}.value", report)
    return ir.MatchHeader(name=m.name, value=m.value, regex=m.regex, invert=m.invert_match)


def _step(
    t: Transformation | None, where: str, request: bool, defaults: Defaults, report: ResourceReport
) -> ir.Step | None:
    if t is None:
        return None
    if (t.transformation_template is None) == (t.header_body_transform is None):
        report.error(where, "set exactly one of transformationTemplate and headerBodyTransform")
        return None
    if t.header_body_transform is not None:
        return ir.HeaderBodyTransformation(
            add_request_metadata=t.header_body_transform.add_request_metadata
        )
    assert t.transformation_template is not None
    template = t.transformation_template
    escape = defaults.escape_characters
    return TemplateBuilder(
        template, f"{where}.transformationTemplate", request, escape, report
    ).build()
