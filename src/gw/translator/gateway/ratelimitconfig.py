"""RateLimitConfigs → the descriptor trees the rate-limit server counts against, and the
descriptor actions Envoy runs on the hosts and routes that reference them.

Each config's actions get a first entry `gw.rlc = <namespace>.<name>` and its descriptors
are served under that entry: two configs never share a counter. Everything Envoy or the
server would refuse is a status here, naming the field; fields of the established API that
this build does not act on (`setDescriptors`, `setActions`, `limit`, `type`,
`sourceCluster`, `metadata`, `rangeMatch`) are refused rather than ignored, so that no one
believes a limit is enforced when it is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gw import api
from gw.api import ResourceKey
from gw.api.ratelimit import Action, Descriptor, HeaderMatcher, RateLimitActions
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import Reports, ResourceReport
from gw.wire import ratelimit

_RAW = "spec.raw"
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_ACTION_KINDS = (
    "generic_key",
    "request_headers",
    "remote_address",
    "header_value_match",
    "destination_cluster",
    "source_cluster",
    "metadata",
)
_CAMEL = {
    "generic_key": "genericKey",
    "request_headers": "requestHeaders",
    "remote_address": "remoteAddress",
    "header_value_match": "headerValueMatch",
    "destination_cluster": "destinationCluster",
    "source_cluster": "sourceCluster",
    "metadata": "metadata",
}
_DEFAULT_KEYS = {"generic_key": "generic_key", "header_value_match": "header_match"}


def config_id(key: ResourceKey) -> str:
    return f"{key.namespace}.{key.name}"


def build_rate_limit_configs(
    snapshot: Snapshot, reports: Reports
) -> dict[ResourceKey, Contribution]:
    out: dict[ResourceKey, Contribution] = {}
    for rlc in snapshot.of_kind(api.RateLimitConfig):
        report = reports.of(rlc.key)
        built = compile_config(rlc, report)
        if built is not None and not report.errors:
            out[rlc.key] = Contribution(rate_limit_configs=(built[0],))
    return out


def compile_config(
    rlc: api.RateLimitConfig, report: ResourceReport
) -> tuple[ratelimit.RateLimitConfig, tuple[ir.Policy, ...]] | None:
    """The server's config and Envoy's policies of one RateLimitConfig; None when it has
    errors (all of them reported)."""
    raw = rlc.spec.raw
    errors = len(report.errors)
    if raw.set_descriptors is not None:
        report.error(
            f"{_RAW}.setDescriptors",
            "setDescriptors is not supported by this gw build: write nested descriptors",
        )
    descriptors = _descriptors(raw.descriptors, f"{_RAW}.descriptors", report)
    ident = config_id(rlc.key)
    first = ir.Action(
        kind="generic_key", descriptor_key=ratelimit.CONFIG_KEY, descriptor_value=ident
    )
    policies = []
    for i, entry in enumerate(raw.rate_limits):
        actions = _actions(entry, f"{_RAW}.rateLimits[{i}]", report)
        if actions:
            policies.append(ir.Policy(actions=(first, *actions)))
    if not raw.rate_limits:
        report.warning(
            f"{_RAW}.rateLimits",
            "no rateLimits: requests produce no descriptors, so nothing is limited",
        )
    elif not raw.descriptors:
        report.warning(f"{_RAW}.descriptors", "no descriptors: no request is ever limited")
    if len(report.errors) > errors:
        return None
    config = ratelimit.RateLimitConfig(
        config_id=ident,
        namespace=rlc.metadata.namespace,
        name=rlc.metadata.name,
        descriptors=descriptors,
    )
    return config, tuple(policies)


def _descriptors(
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
                descriptors=_descriptors(node.descriptors, f"{where}.descriptors", report),
                weight=node.weight,
                always_apply=node.always_apply,
            )
        )
    return tuple(out)


def _actions(entry: RateLimitActions, field: str, report: ResourceReport) -> list[ir.Action]:
    for name, value in (("setActions", entry.set_actions), ("limit", entry.limit)):
        if value is not None:
            report.error(f"{field}.{name}", f"{name} is not supported by this gw build")
    if entry.type is not None:
        report.error(f"{field}.type", "type is not supported by this gw build")
    if not entry.actions:
        report.error(f"{field}.actions", "a rate limit needs at least one action")
        return []
    out = []
    for i, action in enumerate(entry.actions):
        built = _action(action, f"{field}.actions[{i}]", report)
        if built is not None:
            out.append(built)
    return out if len(out) == len(entry.actions) else []


def _action(action: Action, field: str, report: ResourceReport) -> ir.Action | None:
    set_ = [k for k in _ACTION_KINDS if getattr(action, k) is not None]
    if len(set_) != 1:
        names = ", ".join(_CAMEL[k] for k in _ACTION_KINDS[:5])
        report.error(field, f"an action takes exactly one of {names}")
        return None
    kind = set_[0]
    where = f"{field}.{_CAMEL[kind]}"
    if kind in ("source_cluster", "metadata"):
        report.error(where, f"{_CAMEL[kind]} actions are not supported by this gw build")
        return None
    if kind in ("remote_address", "destination_cluster"):
        if getattr(action, kind):
            report.error(where, f"{_CAMEL[kind]} takes no fields: write {{}}")
            return None
        return ir.Action(kind=kind)  # type: ignore[arg-type]
    if action.request_headers is not None:
        rh = action.request_headers
        if not _header_ok(rh.header_name, f"{where}.headerName", report):
            return None
        if not rh.descriptor_key:
            report.error(f"{where}.descriptorKey", "must not be empty")
            return None
        return ir.Action(
            kind="request_headers",
            header_name=rh.header_name.lower(),
            descriptor_key=rh.descriptor_key,
            skip_if_absent=rh.skip_if_absent,
        )
    value = action.generic_key or action.header_value_match
    assert value is not None
    if not value.descriptor_value:
        report.error(f"{where}.descriptorValue", "must not be empty")
        return None
    headers: tuple[ir.HeaderCondition, ...] = ()
    expect = True
    if action.header_value_match is not None:
        hvm = action.header_value_match
        expect = hvm.expect_match
        if not hvm.headers:
            report.error(f"{where}.headers", "headerValueMatch needs at least one header")
            return None
        conditions = [
            _condition(h, f"{where}.headers[{i}]", report) for i, h in enumerate(hvm.headers)
        ]
        if any(c is None for c in conditions):
            return None
        headers = tuple(c for c in conditions if c is not None)
    return ir.Action(
        kind=kind,  # type: ignore[arg-type]
        descriptor_key=value.descriptor_key or _DEFAULT_KEYS[kind],
        descriptor_value=value.descriptor_value,
        expect_match=expect,
        headers=headers,
    )


def _condition(h: HeaderMatcher, field: str, report: ResourceReport) -> ir.HeaderCondition | None:
    if not _header_ok(h.name, f"{field}.name", report):
        return None
    if h.range_match is not None:
        report.error(f"{field}.rangeMatch", "rangeMatch is not supported by this gw build")
        return None
    matches = [
        (kind, value)
        for kind, value in (
            ("exact", h.exact_match),
            ("regex", h.regex_match),
            ("prefix", h.prefix_match),
            ("suffix", h.suffix_match),
        )
        if value is not None
    ]
    if h.present_match is not None:
        matches.append(("present", ""))
    if len(matches) > 1:
        report.error(field, "a header condition takes at most one of the *Match fields")
        return None
    kind, value = matches[0] if matches else ("present", "")
    if kind == "regex":
        try:
            capture_groups(value)
        except RegexError as exc:
            report.error(f"{field}.regexMatch", str(exc))
            return None
    invert = h.invert_match != (h.present_match is False)
    return ir.HeaderCondition(name=h.name.lower(), kind=kind, value=value, invert=invert)  # type: ignore[arg-type]


def _header_ok(name: str, field: str, report: ResourceReport) -> bool:
    bare = name[1:] if name.startswith(":") else name
    if not bare or not _TOKEN.fullmatch(bare):
        report.error(field, f"{name!r} is not a valid HTTP header name")
        return False
    return True
