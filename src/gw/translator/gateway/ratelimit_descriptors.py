"""Descriptor trees and set rules (of a RateLimitConfig or of Settings `ratelimit`) → what the
rate-limit server is served (`gw.wire.ratelimit`), every problem a finding naming the field."""

from __future__ import annotations

from collections.abc import Sequence

from gw.api.ratelimit import Descriptor, SetDescriptor
from gw.translator.reports import ResourceReport
from gw.wire import ratelimit


def descriptors(
    nodes: Sequence[Descriptor], field: str, report: ResourceReport
) -> tuple[ratelimit.Descriptor, ...]:
    out = []
    seen: set[tuple[str, str | None]] = set()
    for i, node in enumerate(nodes):
        where = f"{field}[{i}]"
        if not node.key:
            report.error(f"{where}.key", "a descriptor needs a key")
            continue
        if (node.key, node.value) in seen:
            shown = node.key if node.value is None else f"{node.key}={node.value}"
            report.error(where, f"descriptor {shown} is listed twice at this level")
            continue
        seen.add((node.key, node.value))
        limit = None
        if node.rate_limit is not None:
            limit = ratelimit.Limit(
                unit=node.rate_limit.unit, requests_per_unit=node.rate_limit.requests_per_unit
            )
        out.append(
            ratelimit.Descriptor(
                key=node.key,
                value=node.value,
                limit=limit,
                descriptors=descriptors(node.descriptors, f"{where}.descriptors", report),
                weight=node.weight,
                always_apply=node.always_apply,
            )
        )
    return tuple(out)


def set_descriptors(
    rules: Sequence[SetDescriptor], field: str, report: ResourceReport
) -> tuple[ratelimit.SetDescriptor, ...]:
    out = []
    for i, rule in enumerate(rules):
        where = f"{field}[{i}]"
        if rule.rate_limit is None:
            report.error(f"{where}.rateLimit", "a set descriptor needs a rateLimit")
            continue
        keys = [d.key for d in rule.simple_descriptors]
        for j, key in enumerate(keys):
            if not key:
                report.error(f"{where}.simpleDescriptors[{j}].key", "must not be empty")
            elif key in keys[:j]:
                report.error(f"{where}.simpleDescriptors[{j}]", f"key {key} is listed twice")
        out.append(
            ratelimit.SetDescriptor(
                simple_descriptors=tuple(
                    ratelimit.SimpleDescriptor(key=d.key, value=d.value)
                    for d in rule.simple_descriptors
                ),
                limit=ratelimit.Limit(
                    unit=rule.rate_limit.unit, requests_per_unit=rule.rate_limit.requests_per_unit
                ),
                always_apply=rule.always_apply,
            )
        )
    return tuple(out)
