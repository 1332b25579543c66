"""`optionsConfigRefs.delegateOptions`: VirtualHostOption / RouteOption resources under the
inline options, and the shallow merge that also passes route options down to delegated
routes.

The merge is generic over the models' fields (a field set higher up wins whole; a field
only a lower source sets is taken from it; a oneof of the established API, listed in the
model's `ONEOFS`, counts as one field), so options added by any feature merge the same way
without code here.
"""

from __future__ import annotations

from typing import Any, TypeVar

from gw import api
from gw.api import ResourceKey
from gw.api.delegation import OptionsConfigRefs
from gw.api.meta import Model
from gw.api.virtualservice import RouteOptions, VirtualHostOptions
from gw.translator.gateway.cors import build_cors
from gw.translator.gateway.retries import build_retries
from gw.translator.gateway.traffic import build_host_traffic, build_route_traffic
from gw.translator.gateway.transform import build_transformations
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

M = TypeVar("M", bound=Model)
Merged = TypeVar("Merged", VirtualHostOptions, RouteOptions)
OptionKind = TypeVar("OptionKind", api.VirtualHostOption, api.RouteOption)

_MISSING: dict[type[api.Resource], str] = {
    api.VirtualHostOption: "virtualHostOption",
    api.RouteOption: "routeOption",
}


# A rejected options resource is left out of the merge: the referrer is rejected through
# the reference (refs.py), and its findings stay on the options resource.


def merge_over(high: M | None, low: M | None) -> M | None:
    """`high`'s set fields, completed with the fields only `low` sets."""
    if low is None:
        return high
    if high is None:
        return low
    taken = high.model_fields_set | {
        name
        for group in getattr(type(high), "ONEOFS", ())
        if group & high.model_fields_set
        for name in group
    }
    update = {
        name: getattr(low, name)
        for name in type(low).model_fields
        if name in low.model_fields_set and name not in taken
    }
    return high.model_copy(update=update) if update else high


def merge_option_refs(
    inline: Merged | None,
    kind: type[api.VirtualHostOption] | type[api.RouteOption],
    config_refs: OptionsConfigRefs | None,
    *,
    referrer: ResourceKey,
    field: str,
    refs: Refs,
    reports: Reports,
    report: ResourceReport,
) -> Merged | None:
    """The inline options completed by the `kind` resources `config_refs` name, in their
    order (a field set earlier wins); rejected ones are left out."""
    if config_refs is None:
        return inline  # most hosts and routes name no option resources
    merged = inline
    found_all: list[Any] = _resolve(kind, config_refs, referrer, field, refs, report)
    for found in (f for f in found_all if not reports.rejected(f.key)):
        merged = merge_over(merged, found.spec.options)
    return merged


def _resolve(
    kind: type[OptionKind],
    config_refs: OptionsConfigRefs | None,
    referrer: ResourceKey,
    field: str,
    refs: Refs,
    report: ResourceReport,
) -> list[OptionKind]:
    out: list[OptionKind] = []
    for i, ref in enumerate(config_refs.delegate_options if config_refs else ()):
        where = f"{field}.delegateOptions[{i}]"
        found = refs.resolve(kind, ref, referrer=referrer, field=where)
        if found is not None:
            out.append(found)
            continue
        key = refs.key(kind, ref, referrer)
        if not refs.exists(key):
            report.warning(where, f"list did not find {_MISSING[kind]} {key.namespace}.{key.name}")
    return out


def check_option_resources(refs: Refs, reports: Reports) -> None:
    """Each VirtualHostOption / RouteOption on its own: the options gw can check without a
    virtual host (retries, cors, transformations, the traffic options). A rejected one
    rejects every host that refers to it."""
    for vh_option in refs.of_kind(api.VirtualHostOption):
        report = reports.of(vh_option.key)
        vh = vh_option.spec.options
        build_retries(vh.retries, "spec.options.retries", report)
        build_cors(vh.cors, "spec.options.cors", report, route_level=False)
        build_transformations(vh.staged_transformations, vh.transformations, "spec.options", report)
        build_host_traffic(vh, "spec.options", refs=refs, owner=vh_option.key, report=report)
    for rt_option in refs.of_kind(api.RouteOption):
        report = reports.of(rt_option.key)
        rt = rt_option.spec.options
        build_retries(rt.retries, "spec.options.retries", report)
        build_cors(rt.cors, "spec.options.cors", report, route_level=True)
        build_transformations(rt.staged_transformations, rt.transformations, "spec.options", report)
        build_route_traffic(
            rt,
            "spec.options",
            forwarded=True,
            own=None,
            refs=refs,
            owner=rt_option.key,
            report=report,
        )
