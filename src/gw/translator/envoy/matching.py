"""IR fractions, string matchers and durations → Envoy's types."""

from __future__ import annotations

from envoy.config.core.v3 import base_pb2
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from envoy.type.v3 import percent_pb2
from google.protobuf import duration_pb2

from gw.translator import ir

_DENOMINATORS = {
    100: percent_pb2.FractionalPercent.HUNDRED,
    10_000: percent_pb2.FractionalPercent.TEN_THOUSAND,
    1_000_000: percent_pb2.FractionalPercent.MILLION,
}


def fractional_percent(share: ir.Fraction) -> percent_pb2.FractionalPercent:
    return percent_pb2.FractionalPercent(
        numerator=share.numerator, denominator=_DENOMINATORS[share.denominator]
    )


def runtime_fraction(share: ir.Fraction) -> base_pb2.RuntimeFractionalPercent:
    return base_pb2.RuntimeFractionalPercent(
        default_value=fractional_percent(share), runtime_key=share.runtime_key
    )


def string_matcher(match: ir.StringMatch) -> string_pb2.StringMatcher:
    if match.kind == "regex":
        return string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex=match.value))
    out = string_pb2.StringMatcher(ignore_case=match.ignore_case)
    if match.kind == "exact":
        out.exact = match.value
    elif match.kind == "prefix":
        out.prefix = match.value
    else:
        out.suffix = match.value
    return out


def milliseconds(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)
