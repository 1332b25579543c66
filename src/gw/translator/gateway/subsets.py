"""Subsets: an Upstream's `subsetSpec` → `ir.SubsetConfig`, and a route's `subset` →
the labels its destination's endpoints must carry.

Endpoints are labelled by what they come from: an `orch` upstream's endpoints carry their
pod's labels, a static host the `envoy.lb` entry of its `metadata`. A route's subset is
checked against the upstream's selectors as the established gateway checks it: an
upstream without subsets is a warning (the route goes to every endpoint), values whose keys
no selector has are an error (the route could never match).
"""

from __future__ import annotations

from gw import api
from gw.api.subsets import Subset, SubsetSpec
from gw.translator import ir
from gw.translator.reports import ResourceReport

#: The endpoint metadata namespace Envoy's subset load balancer reads.
LB_METADATA = "envoy.lb"
NO_SUBSETS = "route has a subset config, but the upstream does not"
NO_MATCHING_SUBSET = "route has a subset config, but none of the subsets in the upstream match it"


def subset_spec_of(upstream: api.Upstream) -> SubsetSpec | None:
    spec = upstream.spec
    if spec.orch is not None:
        return spec.orch.subset_spec
    if spec.static is not None:
        return spec.static.subset_spec
    return None


def build_subsets(
    spec: SubsetSpec | None, field: str, report: ResourceReport
) -> ir.SubsetConfig | None:
    if spec is None:
        return None
    errors = len(report.errors)
    if not spec.selectors:
        report.error(f"{field}.selectors", "a subset spec needs at least one selector")
    for i, selector in enumerate(spec.selectors):
        if not selector.keys or not all(selector.keys):
            report.error(f"{field}.selectors[{i}].keys", "a selector needs label keys")
    default = tuple(sorted((spec.default_subset.values if spec.default_subset else {}).items()))
    if spec.fallback_policy == "DEFAULT_SUBSET" and not default:
        report.error(
            f"{field}.defaultSubset",
            "fallbackPolicy DEFAULT_SUBSET needs defaultSubset.values to fall back to",
        )
    elif default and spec.fallback_policy != "DEFAULT_SUBSET":
        report.warning(
            f"{field}.defaultSubset",
            "defaultSubset is used only with fallbackPolicy DEFAULT_SUBSET",
        )
    if len(report.errors) > errors:
        return None
    return ir.SubsetConfig(
        selectors=tuple(
            ir.SubsetSelector(keys=tuple(s.keys), single_host_per_subset=s.single_host_per_subset)
            for s in spec.selectors
        ),
        fallback=spec.fallback_policy,
        default_subset=default,
    )


def route_subset(
    upstream: api.Upstream | None, subset: Subset | None, field: str, report: ResourceReport
) -> tuple[tuple[str, str], ...]:
    """The labels a route's destination asks for; () when none (or none apply: reported).

    `upstream` is None for a destination without an Upstream resource (a service addressed
    directly, or an upstream that does not exist): it has no subsets."""
    if subset is None or not subset.values:
        return ()
    spec = subset_spec_of(upstream) if upstream is not None else None
    if spec is None:
        report.warning(field, NO_SUBSETS)
        return ()
    keys = set(subset.values)
    if not any(set(selector.keys) == keys for selector in spec.selectors):
        report.error(field, NO_MATCHING_SUBSET)
        return ()
    return tuple(sorted(subset.values.items()))
