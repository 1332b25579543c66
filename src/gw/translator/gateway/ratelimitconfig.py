"""RateLimitConfigs and Settings `ratelimit` → the descriptor trees and set rules the
rate-limit server counts against, and the descriptor actions Envoy runs (`compile_actions`,
also for the inline `rateLimits` of hosts and routes, `ratelimit.py`).

Each config's actions get a first entry `gw.rlc = <id>` (`gw.rlc.set = <id>` for
`setActions`) and its descriptors are served under that id: two configs never share a
counter. Inline actions are matched against Settings `ratelimit` (id `gw:settings`).
Everything Envoy or the server would refuse is a status here, naming the field; fields of
the established API that this build does not act on (`limit`, `type`, `sourceCluster`,
`metadata`, `rangeMatch`) are refused rather than ignored, so that no one believes a limit
is enforced when it is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gw import api
from gw.api import ResourceKey
from gw.api.ratelimit import Action, HeaderMatcher, RateLimitActions
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway import ratelimit_descriptors as trees
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
    snapshot: Snapshot,
    reports: Reports,
    settings: api.Settings | None = None,
    settings_key: ResourceKey | None = None,
) -> dict[ResourceKey, Contribution]:
    """Every RateLimitConfig's server config, and that of Settings `ratelimit` (a
    contribution of the Settings: while they are rejected, their last accepted one)."""
    out: dict[ResourceKey, Contribution] = {}
    for rlc in snapshot.of_kind(api.RateLimitConfig):
        report = reports.of(rlc.key)
        built = compile_config(rlc, report)
        if built is not None and not report.errors:
            out[rlc.key] = Contribution(rate_limit_configs=(built[0],))
    service = settings.spec.ratelimit if settings is not None else None
    if service is not None and settings_key is not None:
        report = reports.of(settings_key)
        config = ratelimit.RateLimitConfig(
            config_id=ratelimit.SETTINGS_CONFIG,
            namespace=settings_key.namespace,
            name=settings_key.name,
            descriptors=trees.descriptors(
                service.descriptors, "spec.ratelimit.descriptors", report
            ),
            set_descriptors=trees.set_descriptors(
                service.set_descriptors, "spec.ratelimit.setDescriptors", report
            ),
        )
        if not report.errors:
            out[settings_key] = Contribution(rate_limit_configs=(config,))
    return out


def compile_config(
    rlc: api.RateLimitConfig, report: ResourceReport
) -> tuple[ratelimit.RateLimitConfig, tuple[ir.Policy, ...]] | None:
    """The server's config and Envoy's policies of one RateLimitConfig; None when it has
    errors (all of them reported)."""
    raw = rlc.spec.raw
    errors = len(report.errors)
    descriptors = trees.descriptors(raw.descriptors, f"{_RAW}.descriptors", report)
    set_descriptors = trees.set_descriptors(raw.set_descriptors, f"{_RAW}.setDescriptors", report)
    ident = config_id(rlc.key)
    policies = compile_actions(raw.rate_limits, ident, f"{_RAW}.rateLimits", report)
    if not raw.rate_limits:
        report.warning(
            f"{_RAW}.rateLimits",
            "no rateLimits: requests produce no descriptors, so nothing is limited",
        )
    elif not raw.descriptors and not raw.set_descriptors:
        report.warning(f"{_RAW}.descriptors", "no descriptors: no request is ever limited")
    if len(report.errors) > errors:
        return None
    config = ratelimit.RateLimitConfig(
        config_id=ident,
        namespace=rlc.metadata.namespace,
        name=rlc.metadata.name,
        descriptors=descriptors,
        set_descriptors=set_descriptors,
    )
    return config, policies


def compile_actions(
    entries: Sequence[RateLimitActions], ident: str, field: str, report: ResourceReport
) -> tuple[ir.Policy, ...]:
    """Envoy's descriptor actions for `entries` (at `field`), matched against the config
    `ident`: each entry's `actions` make one descriptor (first entry `gw.rlc = ident`), its
    `setActions` another (first entry `gw.rlc.set = ident`)."""
    policies = []
    for i, entry in enumerate(entries):
        where = f"{field}[{i}]"
        for name, value in (("limit", entry.limit), ("type", entry.type)):
            if value is not None:
                report.error(f"{where}.{name}", f"{name} is not supported by this gw build")
        if not entry.actions and not entry.set_actions:
            report.error(f"{where}.actions", "a rate limit needs at least one action")
        for key, actions, name in (
            (ratelimit.CONFIG_KEY, entry.actions, "actions"),
            (ratelimit.SET_CONFIG_KEY, entry.set_actions, "setActions"),
        ):
            built = _actions(actions, f"{where}.{name}", report)
            if built:
                first = ir.Action(kind="generic_key", descriptor_key=key, descriptor_value=ident)
                policies.append(ir.Policy(actions=(first, *built)))
    return tuple(policies)


def _actions(actions: Sequence[Action], field: str, report: ResourceReport) -> list[ir.Action]:
    """The entries of one descriptor; none when one of them is wrong (all reported)."""
    out = []
    for i, action in enumerate(actions):
        built = _action(action, f"{field}[{i}]", report)
        if built is not None:
            out.append(built)
    return out if len(out) == len(actions) else []


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
