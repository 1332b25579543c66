"""An access log's `filter` → `ir.LogFilter`: which requests are logged. Each test is
Envoy's access log filter of the same name; what Envoy requires (a runtime key for
comparisons, two filters or more to combine, a known response flag, a valid regex) is
checked here, so that Envoy never refuses the listener."""

from __future__ import annotations

from gw.api.access_log import AccessLogFilter, ComparisonFilter, HeaderMatcher
from gw.translator import ir
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import ResourceReport

#: Envoy's response flags (its short names), which `responseFlagFilter` may name.
RESPONSE_FLAGS = frozenset(
    "LH UH UT LR UR UF UC UO NR DI FI RL UAEX RLSE DC URX SI IH DPE UMSDR RFCF NFCF DT UPE NC "
    "OM".split()
)


def build_log_filter(f: AccessLogFilter, field: str, report: ResourceReport) -> ir.LogFilter | None:
    chosen = [name for name, value in f if value is not None]
    if len(chosen) != 1:
        report.error(field, "set exactly one test (statusCodeFilter, headerFilter, andFilter, ...)")
        return None
    kind = chosen[0]
    where = f"{field}.{_camel(kind)}"
    match kind:
        case "status_code_filter" | "duration_filter":
            comparison = getattr(f, kind).comparison
            return _comparison(kind.removesuffix("_filter"), comparison, where, report)
        case "not_health_check_filter" | "traceable_filter":
            return ir.LogFilter(kind=kind.removesuffix("_filter"))  # type: ignore[arg-type]
        case "runtime_filter":
            runtime = f.runtime_filter
            assert runtime is not None
            if not runtime.runtime_key:
                report.error(f"{where}.runtimeKey", "name the runtime key (required by Envoy)")
                return None
            percent = runtime.percent_sampled
            return ir.LogFilter(
                kind="runtime",
                runtime_key=runtime.runtime_key,
                numerator=percent.numerator if percent else 0,
                denominator=percent.denominator if percent else "HUNDRED",
                independent_randomness=runtime.use_independent_randomness,
            )
        case "and_filter" | "or_filter":
            return _combined(f, kind, where, report)
        case "header_filter":
            assert f.header_filter is not None
            header = _header(f.header_filter.header, f"{where}.header", report)
            return None if header is None else ir.LogFilter(kind="header", header=header)
        case "response_flag_filter":
            assert f.response_flag_filter is not None
            flags = f.response_flag_filter.flags
            for i, flag in enumerate(flags):
                if flag not in RESPONSE_FLAGS:
                    report.error(f"{where}.flags[{i}]", f"{flag} is not a response flag of Envoy")
                    return None
            return ir.LogFilter(kind="response_flag", flags=tuple(flags))
    assert f.grpc_status_filter is not None
    grpc = f.grpc_status_filter
    return ir.LogFilter(kind="grpc_status", statuses=tuple(grpc.statuses), exclude=grpc.exclude)


def _comparison(
    kind: str, comparison: ComparisonFilter | None, field: str, report: ResourceReport
) -> ir.LogFilter | None:
    value = comparison.value if comparison else None
    if comparison is None or value is None:
        report.error(f"{field}.comparison", "set comparison.op and comparison.value")
        return None
    if not value.runtime_key:
        report.error(
            f"{field}.comparison.value.runtimeKey",
            "name a runtime key (Envoy requires one; defaultValue applies while the runtime "
            "does not set it)",
        )
        return None
    return ir.LogFilter(
        kind=kind,  # type: ignore[arg-type]
        op=comparison.op,
        default_value=value.default_value,
        runtime_key=value.runtime_key,
    )


def _combined(
    f: AccessLogFilter, kind: str, field: str, report: ResourceReport
) -> ir.LogFilter | None:
    combined = f.and_filter if kind == "and_filter" else f.or_filter
    assert combined is not None
    if len(combined.filters) < 2:
        report.error(f"{field}.filters", "combine at least two filters")
        return None
    parts = [
        build_log_filter(sub, f"{field}.filters[{i}]", report)
        for i, sub in enumerate(combined.filters)
    ]
    if any(p is None for p in parts):
        return None
    return ir.LogFilter(
        kind="and" if kind == "and_filter" else "or",
        filters=tuple(p for p in parts if p is not None),
    )


def _header(
    header: HeaderMatcher | None, field: str, report: ResourceReport
) -> ir.LogHeader | None:
    if header is None or not header.name:
        report.error(f"{field}.name", "name the header to test")
        return None
    tests: list[tuple[str, str]] = [
        (kind, value)
        for kind, value in (
            ("exact", header.exact_match),
            ("prefix", header.prefix_match),
            ("suffix", header.suffix_match),
            ("regex", header.safe_regex_match.regex if header.safe_regex_match else None),
        )
        if value is not None
    ]
    if header.range_match is not None:
        tests.append(("range", ""))
    if header.present_match is not None:
        tests.append(("present", ""))
    if len(tests) > 1:
        report.error(
            field,
            "set at most one of exactMatch, prefixMatch, suffixMatch, "
            "safeRegexMatch, rangeMatch and presentMatch",
        )
        return None
    kind, value = tests[0] if tests else ("present", "")
    regex = header.safe_regex_match
    if regex is not None and regex.google_re2 is not None:
        report.warning(
            f"{field}.safeRegexMatch.googleRe2",
            "no effect: Envoy checks every regex against its own program size limit (100)",
        )
    if kind == "regex":
        try:
            capture_groups(value)
        except RegexError as e:
            report.error(f"{field}.safeRegexMatch.regex", str(e))
            return None
    span = header.range_match
    return ir.LogHeader(
        name=header.name,
        kind=kind,  # type: ignore[arg-type]
        value=value,
        start=span.start if span else 0,
        end=span.end if span else 0,
        invert=header.invert_match,
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
