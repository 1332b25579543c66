"""`transformations` and `stagedTransformations` (virtual host, route, weighted
destination) → `ir.StagedTransformations`.

Per stage, the entries (`requestTransforms`, and `transformations` as the regular stage's
one entry when `stagedTransformations.regular` is not set) become Envoy's own header
filters when they can (`transform_native.py`), else a Lua script's rules
(`transformation.py`). `inherit` implements `inheritTransformation`. A `spanTransformer`
with a literal name names the route's tracing span; a templated one is refused: Envoy's Lua
filter cannot rename a span.
"""

from __future__ import annotations

from gw.api.transform import (
    RequestMatch,
    RequestResponseTransformations,
    ResponseMatch,
    Transformations,
    TransformationStages,
)
from gw.translator import ir
from gw.translator.gateway.template import TemplateError, parse_template
from gw.translator.gateway.transform_native import build_native, is_native
from gw.translator.gateway.transformation import Defaults, build_rules
from gw.translator.reports import ResourceReport

_NO_STAGES = TransformationStages()


def build_transformations(
    staged: TransformationStages | None,
    legacy: Transformations | None,
    field: str,
    report: ResourceReport,
) -> ir.StagedTransformations | None:
    """The checked transformations of one options object (`field` is its path), or None
    when there are none or some part is bad."""
    if staged is None and legacy is None:
        return None
    stages = staged or _NO_STAGES
    errors = len(report.errors)
    defaults = Defaults(
        escape_characters=bool(stages.escape_characters),
        log=bool(stages.log_request_response_info),
    )
    where = f"{field}.stagedTransformations"
    if stages.post_routing is not None:
        report.error(
            f"{where}.postRouting",
            "postRouting transformations are not supported: they run in Envoy's upstream "
            "filter chain, which gw does not configure; use regular",
        )
    early = _entries(stages.early, f"{where}.early")
    if stages.regular is not None:
        regular = _entries(stages.regular, f"{where}.regular")
    elif legacy is not None:
        entry = RequestMatch(
            clear_route_cache=legacy.clear_route_cache,
            request_transformation=legacy.request_transformation,
            response_transformation=legacy.response_transformation,
        )
        regular = ([(entry, f"{field}.transformations")], [])
    else:
        regular = ([], [])
    span = _span_name([*early[0], *regular[0]], report)
    built = ir.StagedTransformations(
        early=_stage(*early, defaults, report),
        regular=_stage(*regular, defaults, report),
        span_name=span,
    )
    return built if len(report.errors) == errors else None


Entries = tuple[list[tuple[RequestMatch, str]], list[tuple[ResponseMatch, str]]]


def _entries(stage: RequestResponseTransformations | None, where: str) -> Entries:
    if stage is None:
        return [], []
    requests = [
        (e, f"{where}.requestTransforms[{i}]") for i, e in enumerate(stage.request_transforms)
    ]
    responses = [
        (e, f"{where}.responseTransforms[{i}]") for i, e in enumerate(stage.response_transforms)
    ]
    return requests, responses


def _stage(
    requests: list[tuple[RequestMatch, str]],
    responses: list[tuple[ResponseMatch, str]],
    defaults: Defaults,
    report: ResourceReport,
) -> ir.Stage | None:
    if not requests and not responses:
        return None
    for (entry, _), (_, later_where) in zip(requests, requests[1:], strict=False):
        if entry.matcher is None:
            report.warning(
                later_where,
                "never applies: an earlier entry of requestTransforms matches every request",
            )
            break
    if is_native(requests, responses) and not defaults.log and not defaults.escape_characters:
        first, where = requests[0]
        for later, later_where in requests[1:]:  # checked, although they never apply
            build_rules([(later, later_where)], [], defaults, report)
        request, response = first.request_transformation, first.response_transformation
        return build_native(
            request.transformation_template if request else None,
            response.transformation_template if response else None,
            where,
            report,
        )
    return build_rules(requests, responses, defaults, report)


def _span_name(requests: list[tuple[RequestMatch, str]], report: ResourceReport) -> str | None:
    name = None
    for entry, where in requests:
        t = entry.request_transformation
        span = (
            t.transformation_template.span_transformer if t and t.transformation_template else None
        )
        if span is None:
            continue
        at = f"{where}.requestTransformation.transformationTemplate.spanTransformer.name.text"
        try:
            nodes = parse_template(span.name.text).nodes
        except TemplateError as exc:
            report.error(at, f"template not supported: {exc}")
            continue
        if not all(isinstance(n, ir.Text) for n in nodes):
            report.error(
                at,
                "a span name built from a template is not supported: Envoy's Lua filter "
                "cannot rename the tracing span; use a literal name (gw serves it as the "
                "route's decorator)",
            )
            continue
        name = name or "".join(n.text for n in nodes if isinstance(n, ir.Text))
    return name


def inherit(
    child: ir.StagedTransformations | None, parent: ir.StagedTransformations | None
) -> ir.StagedTransformations | None:
    """`inheritTransformation: true`: per stage, the child's entries then the parent's."""
    if child is None or parent is None:
        return child or parent
    return ir.StagedTransformations(
        early=_concat(child.early, parent.early),
        regular=_concat(child.regular, parent.regular),
        span_name=child.span_name or parent.span_name,
    )


def _concat(child: ir.Stage | None, parent: ir.Stage | None) -> ir.Stage | None:
    if child is None or parent is None:
        return child or parent
    first, second = as_script(child), as_script(parent)
    return ir.TransformationScript(
        request_rules=first.request_rules + second.request_rules,
        response_rules=first.response_rules + second.response_rules,
        log=first.log or second.log,
    )


def as_script(stage: ir.Stage) -> ir.TransformationScript:
    """A native stage as the equivalent script (to be combined with another script)."""
    if isinstance(stage, ir.TransformationScript):
        return stage
    extractors = tuple(
        ir.TemplateExtractor(
            name=e.name,
            header=e.header,
            regex=e.regex,
            subgroup=e.subgroup,
            mode=e.mode,
            replacement=e.replacement,
        )
        for e in stage.extractors
    )
    step = ir.TemplateTransformation(
        extractors=extractors,
        headers=tuple(_rendered(h, "header") for h in stage.headers),
        headers_to_remove=stage.headers_to_remove,
        headers_to_append=tuple(_rendered(h, "header") for h in stage.headers_to_append),
        parse_json=False,
    )
    response = None
    if (
        stage.response_headers
        or stage.response_headers_to_remove
        or stage.response_headers_to_append
    ):
        response = ir.TemplateTransformation(
            headers=tuple(_rendered(h, "request_header") for h in stage.response_headers),
            headers_to_remove=stage.response_headers_to_remove,
            headers_to_append=tuple(
                _rendered(h, "request_header") for h in stage.response_headers_to_append
            ),
            parse_json=False,
        )
    requests = (
        stage.extractors or stage.headers or stage.headers_to_remove or stage.headers_to_append
    )
    rule = ir.RequestRule(request=step if requests else None, response=response)
    return ir.TransformationScript(request_rules=(rule,))


def _rendered(header: ir.HeaderTemplate, read: str) -> ir.RenderedHeader:
    """A native header as a template; `read` is the function reading a header."""
    nodes: list[ir.Node] = []
    for part in header.parts:
        if isinstance(part, str):
            nodes.append(ir.Text(text=part))
        else:
            name = part.extractor if isinstance(part, ir.ExtractorRef) else part.header
            call = "extraction" if isinstance(part, ir.ExtractorRef) else read
            nodes.append(ir.Output(output=ir.Call(call=call, args=(ir.Literal(literal=name),))))
    return ir.RenderedHeader(name=header.name, template=tuple(nodes))
