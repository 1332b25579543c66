"""`csrf` (virtual host, route, weighted destination) → `ir.CsrfPolicy`. Unset
`filterEnabled` enforces nothing (the established gateway's translation), so a policy with
`shadowEnabled` alone only counts; `additionalOrigins` are string matchers."""

from __future__ import annotations

from gw.api.csrf import CsrfPolicy
from gw.translator import ir
from gw.translator.gateway.matching import fraction, string_match
from gw.translator.reports import ResourceReport

_NONE = ir.Fraction(numerator=0)


def build_csrf(
    policy: CsrfPolicy | None, field: str, report: ResourceReport
) -> ir.CsrfPolicy | None:
    if policy is None:
        return None
    errors = len(report.errors)
    enforced = _NONE
    if policy.filter_enabled is not None:
        enforced = fraction(policy.filter_enabled, f"{field}.filterEnabled", report) or _NONE
    shadow = None
    if policy.shadow_enabled is not None:
        shadow = fraction(policy.shadow_enabled, f"{field}.shadowEnabled", report)
    origins = []
    for i, matcher in enumerate(policy.additional_origins):
        built = string_match(matcher, f"{field}.additionalOrigins[{i}]", report)
        if built is not None:
            origins.append(built)
    if len(report.errors) > errors:
        return None
    if policy.filter_enabled is None and policy.shadow_enabled is None:
        report.warning(
            field,
            "neither filterEnabled nor shadowEnabled is set: the policy checks no request",
        )
    return ir.CsrfPolicy(enforced=enforced, shadow=shadow, additional_origins=tuple(origins))
