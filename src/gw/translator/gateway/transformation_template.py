"""One `transformationTemplate` of a transformation that runs as a Lua script →
`ir.TemplateTransformation`, checked field by field (extractors, headers, body modes,
dynamic metadata) with every template parsed (`template.py`)."""

from __future__ import annotations

from typing import Literal

from gw.api.transform import Extraction, TransformationTemplate
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem, line_break_problem
from gw.translator.gateway.template import Parsed, TemplateError, parse_template
from gw.translator.gateway.transform_extractors import group_references
from gw.translator.regex import RegexError, capture_groups
from gw.translator.regex_program import compile_program
from gw.translator.reports import ResourceReport

#: The namespace of `dynamicMetadataValues` without `metadataNamespace` (the established
#: gateway's transformation filter name, with its vendor renamed).
DEFAULT_METADATA_NAMESPACE = "io.vendor.transformation"
_REQUEST_PSEUDO = frozenset({":path", ":method", ":authority", ":scheme"})
Mode = Literal["extract", "single_replace", "replace_all"]
BodyMode = Literal["keep", "template", "merge_extractors", "merge_json_keys"]
_MODES: dict[str, Mode] = {
    "EXTRACT": "extract",
    "SINGLE_REPLACE": "single_replace",
    "REPLACE_ALL": "replace_all",
}


def check_regex(regex: str, where: str, report: ResourceReport) -> int | None:
    """The regex's capture groups, after checking it as RE2 and as the script runs it."""
    try:
        groups = capture_groups(regex)
        compile_program(regex)
    except RegexError as exc:
        report.error(where, str(exc))
        return None
    return groups


class TemplateBuilder:
    """One `transformationTemplate`, checked field by field."""

    def __init__(
        self,
        t: TransformationTemplate,
        where: str,
        request: bool,
        escape: bool,
        report: ResourceReport,
    ) -> None:
        """`escape`: the stage's escapeCharacters (the template's own wins)."""
        self.t, self.where, self.request, self.report = t, where, request, report
        self.escape = t.escape_characters if t.escape_characters is not None else escape
        self.reads_data = False
        self.calls: set[str] = set()

    def build(self) -> ir.TemplateTransformation:
        t = self.t
        self._check_body_modes()
        extractors = tuple(
            e
            for name, x in sorted(t.extractors.items())
            if (e := self._extractor(name, x, f"{self.where}.extractors.{name}")) is not None
        )
        headers, removed, appended = self._headers()
        metadata = self._metadata()
        body, body_template, merged = self._body()
        if t.span_transformer is not None and not self.request:
            self.report.warning(
                f"{self.where}.spanTransformer",
                "no effect on a response: spans are named on the request side",
            )
        parse = t.parse_body_behavior != "DontParse" and t.passthrough is None
        reads = (
            self.reads_data
            or bool(self.calls & {"context"})
            or body in ("merge_extractors", "merge_json_keys")
        )
        return ir.TemplateTransformation(
            advanced=t.advanced_templates,
            extractors=extractors,
            headers=headers,
            headers_to_remove=removed,
            headers_to_append=appended,
            body=body,
            body_template=body_template,
            merged_keys=merged,
            parse_json=parse and reads,
            ignore_parse_errors=t.ignore_error_on_parse,
            dynamic_metadata=metadata,
            escape_characters=bool(self.escape),
            passthrough=t.passthrough is not None,
        )

    def _check_body_modes(self) -> None:
        t = self.t
        modes = [
            n
            for n, v in (
                ("body", t.body),
                ("passthrough", t.passthrough),
                ("mergeExtractorsToBody", t.merge_extractors_to_body),
                ("mergeJsonKeys", t.merge_json_keys),
            )
            if v is not None
        ]
        if len(modes) > 1:
            self.report.error(
                self.where, f"set only one of {', '.join(modes)}: they are alternatives"
            )
        if t.merge_json_keys is not None and t.parse_body_behavior == "DontParse":
            self.report.error(
                f"{self.where}.mergeJsonKeys",
                "mergeJsonKeys needs the body parsed as JSON: remove parseBodyBehavior: DontParse",
            )

    def _headers(
        self,
    ) -> tuple[tuple[ir.RenderedHeader, ...], tuple[str, ...], tuple[ir.RenderedHeader, ...]]:
        """`headers`, `headersToRemove` and `headersToAppend`, checked."""
        t, where = self.t, self.where
        headers = tuple(
            h
            for name, x in sorted(t.headers.items())
            if (h := self._header(name, x.text, f"{where}.headers.{name}")) is not None
        )
        appended = tuple(
            h
            for i, x in enumerate(t.headers_to_append)
            if (
                h := self._header(
                    x.key, x.value.text, f"{where}.headersToAppend[{i}]", "value.text"
                )
            )
            is not None
        )
        removed = []
        for i, name in enumerate(t.headers_to_remove):
            problem = header_name_problem(name)
            if problem is not None:
                self.report.error(f"{where}.headersToRemove[{i}]", problem)
            removed.append(_header_key(name))
        return headers, tuple(removed), appended

    def _metadata(self) -> tuple[ir.MetadataValue, ...]:
        out = []
        for i, m in enumerate(self.t.dynamic_metadata_values):
            at = f"{self.where}.dynamicMetadataValues[{i}]"
            if not m.key:
                self.report.error(f"{at}.key", "set key: the metadata key to write")
            out.append(
                ir.MetadataValue(
                    namespace=m.metadata_namespace or DEFAULT_METADATA_NAMESPACE,
                    key=m.key,
                    template=self._template(m.value.text, f"{at}.value.text"),
                    json_to_proto=m.json_to_proto,
                )
            )
        return tuple(out)

    def _body(self) -> tuple[BodyMode, tuple[ir.Node, ...], tuple[ir.MergedKey, ...]]:
        t = self.t
        if t.body is not None:
            return "template", self._template(t.body.text, f"{self.where}.body.text"), ()
        if t.merge_extractors_to_body is not None:
            return "merge_extractors", (), ()
        if t.merge_json_keys is not None:
            merged = tuple(
                ir.MergedKey(
                    key=k,
                    template=self._template(
                        v.tmpl.text, f"{self.where}.mergeJsonKeys.jsonKeys.{k}.tmpl.text"
                    ),
                    override_empty=v.override_empty,
                )
                for k, v in sorted(t.merge_json_keys.json_keys.items())
            )
            return "merge_json_keys", (), merged
        return "keep", (), ()

    def _extractor(self, name: str, x: Extraction, where: str) -> ir.TemplateExtractor | None:
        errors = len(self.report.errors)
        if (x.header is None) == (x.body is None):
            self.report.error(
                where, "set exactly one of header and body: where the value comes from"
            )
        header = _header_key(x.header) if x.header else None
        if not x.regex:
            self.report.error(f"{where}.regex", "set regex (.* takes the whole value)")
            return None
        groups = check_regex(x.regex, f"{where}.regex", self.report)
        mode = _MODES[x.mode]
        replacement: tuple[str | int, ...] = ()
        if mode == "extract" and x.replacement_text is not None:
            self.report.error(
                f"{where}.replacementText",
                "replacementText is only for modes SINGLE_REPLACE and REPLACE_ALL",
            )
        elif mode != "extract" and x.replacement_text is None:
            self.report.error(f"{where}.replacementText", f"mode {x.mode} needs replacementText")
        elif mode == "single_replace":
            replacement = (x.replacement_text or "",)
        elif mode == "replace_all":
            replacement = group_references(
                x.replacement_text or "", groups, f"{where}.replacementText", self.report
            )
        if mode == "replace_all" and x.subgroup:
            self.report.error(
                f"{where}.subgroup",
                "mode REPLACE_ALL replaces whole matches: leave subgroup unset (0)",
            )
        elif groups is not None and x.subgroup > groups:
            self.report.error(
                f"{where}.subgroup",
                f"subgroup {x.subgroup} is beyond the regex's {groups} capture group(s); "
                "0 is the whole match",
            )
        if len(self.report.errors) != errors:
            return None
        return ir.TemplateExtractor(
            name=name,
            header=header,
            regex=x.regex,
            subgroup=x.subgroup,
            mode=mode,
            replacement=replacement,
        )

    def _header(
        self, name: str, text: str, where: str, leaf: str = "text"
    ) -> ir.RenderedHeader | None:
        key = _header_key(name)
        allowed = _REQUEST_PSEUDO if self.request else frozenset({":status"})
        if key.startswith(":") and key not in allowed:
            self.report.error(
                where,
                f"{name!r} cannot be written here; the pseudo-headers a "
                f"{'request' if self.request else 'response'} transformation writes: "
                + ", ".join(sorted(allowed)),
            )
            return None
        problem = None if key.startswith(":") else header_name_problem(name)
        if problem is not None:
            self.report.error(where, problem)
            return None
        parsed = self._parsed(text, f"{where}.{leaf}")
        for node in parsed.texts if parsed is not None else ():
            if (problem := line_break_problem(node)) is not None:
                self.report.error(f"{where}.{leaf}", problem)
                return None
        return ir.RenderedHeader(name=key, template=parsed.nodes if parsed is not None else ())

    def _template(self, text: str, where: str) -> tuple[ir.Node, ...]:
        parsed = self._parsed(text, where)
        return parsed.nodes if parsed is not None else ()

    def _parsed(self, text: str, where: str) -> Parsed | None:
        """The template `text`, checked against this transformation's extractors (None
        when it does not parse, reported)."""
        try:
            parsed = parse_template(text, pointer=self.t.advanced_templates)
        except TemplateError as exc:
            self.report.error(where, f"template not supported: {exc}")
            return None
        self.calls |= parsed.calls
        data = parsed.variables - {name.split(".")[0] for name in self.t.extractors}
        if self.t.advanced_templates:
            data = parsed.variables
        self.reads_data = self.reads_data or bool(data) or "exists" in parsed.calls
        for call in parsed.extractions:
            if call not in self.t.extractors:
                defined = ", ".join(sorted(self.t.extractors)) or "none"
                self.report.error(
                    where,
                    f'extraction("{call}") names an extractor that is not defined '
                    f"(defined: {defined})",
                )
        return parsed


def _header_key(name: str) -> str:
    lowered = name.lower()
    return ":authority" if lowered == "host" else lowered
