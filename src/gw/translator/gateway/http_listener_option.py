"""HttpListenerOption → the `httpGateway.options` of the Gateways it targets.

Each option is checked on its own, as the `httpGateway.options` of a Gateway would be
(its findings under `spec.options`), and its `targetRefs` checked: a Gateway
(`gateway.vendor.io`) of its own namespace, optionally one listener of it (`sectionName`,
the listener's name `listener-<bindAddress>-<bindPort>`). Of the options that target one
Gateway, the established precedence picks one: those naming the listener first, then the
older (`metadata.creationTimestamp`; without one, after those with one), then by name; the
others say they are not applied. The chosen one is merged under the Gateway's own
`httpGateway.options` (a field the Gateway sets wins, whole) — also under each HTTP part
of a hybrid Gateway — and the Gateway refers to it: a rejected option rejects the Gateway,
which keeps serving its last accepted listener.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from gw import api
from gw.api import ResourceKey
from gw.api.http_listener_option import PolicyTargetReference
from gw.api.http_listener_options import HttpListenerOptions
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

#: Checks an option's `options`, reporting on it.
Check = Callable[[api.HttpListenerOption, ResourceReport], None]
GROUP = api.Gateway.API_VERSION.split("/")[0]
#: The orchestrator's Gateway API group, which gw does not serve.
GATEWAY_API_GROUP = "gateway.networking.k8s.io"
#: Where a Gateway refers to its option (a rejected option is reported there).
FIELD = "spec.httpGateway.options"


def attach(refs: Refs, reports: Reports, check: Check) -> dict[ResourceKey, HttpListenerOptions]:
    """The options each Gateway gets from the HttpListenerOption chosen for it."""
    gateways = {g.key: g for g in refs.of_kind(api.Gateway)}
    candidates: dict[ResourceKey, dict[ResourceKey, tuple[tuple[int, str, str], str]]]
    candidates = defaultdict(dict)
    options = {o.key: o for o in refs.of_kind(api.HttpListenerOption)}
    for option in options.values():
        report = reports.of(option.key)
        check(option, report)
        for i, target in enumerate(option.spec.target_refs):
            field = f"spec.targetRefs[{i}]"
            key = _target(option, target, field, report)
            gateway = gateways.get(key) if key is not None else None
            if key is None:
                continue
            if gateway is None:
                if not refs.exists(key):
                    report.warning(field, f"Gateway {key.namespace}.{key.name} not found")
                continue
            order = _order(option, target, gateway, field, report)
            if order is not None:
                best = candidates[key].get(option.key)
                candidates[key][option.key] = min(best, (order, field)) if best else (order, field)
    out: dict[ResourceKey, HttpListenerOptions] = {}
    for key, found in sorted(candidates.items()):
        ranked = sorted(found.items(), key=lambda item: item[1][0])
        chosen = ranked[0][0]
        for other, (_, field) in ranked[1:]:
            reports.of(other).warning(
                field,
                f"not applied to gateway {key.namespace}.{key.name}: HttpListenerOption "
                f"{chosen.namespace}.{chosen.name} takes precedence (one naming the listener "
                "first, then the oldest)",
            )
        refs.link(key, FIELD, chosen)  # a rejected option rejects the Gateway through it
        if reports.rejected(chosen):
            continue
        if (chosen_options := options[chosen].spec.options) is not None:
            out[key] = chosen_options
    return out


def _target(
    option: api.HttpListenerOption,
    target: PolicyTargetReference,
    field: str,
    report: ResourceReport,
) -> ResourceKey | None:
    namespace = option.metadata.namespace
    if target.group == GATEWAY_API_GROUP:
        report.error(
            f"{field}.group",
            f"{GATEWAY_API_GROUP} is not supported: gw serves no orchestrator Gateway API "
            f"Gateways; target the {GROUP} Gateway (group: {GROUP}, kind: Gateway)",
        )
        return None
    if target.group not in ("", GROUP):
        report.error(f"{field}.group", f"{target.group} has no Gateways; use {GROUP}")
        return None
    if target.kind != api.Gateway.KIND:
        report.error(
            f"{field}.kind",
            f"an HttpListenerOption targets Gateways, not {target.kind or 'an empty kind'}",
        )
        return None
    if target.namespace not in (None, "", namespace):
        report.error(
            f"{field}.namespace",
            f"an HttpListenerOption attaches only to Gateways of its own namespace "
            f"({namespace}); create it in {target.namespace}",
        )
        return None
    return ResourceKey(api.Gateway.KIND, namespace, target.name)


def _order(
    option: api.HttpListenerOption,
    target: PolicyTargetReference,
    gateway: api.Gateway,
    field: str,
    report: ResourceReport,
) -> tuple[int, str, str] | None:
    """How the option ranks for `gateway` (lower first), or None when it does not apply."""
    spec = gateway.spec
    listener = f"listener-{spec.bind_address}-{spec.bind_port}"
    where = f"gateway {gateway.metadata.namespace}.{gateway.metadata.name}"
    if target.section_name and target.section_name != listener:
        report.warning(
            f"{field}.sectionName",
            f"{where} has no listener {target.section_name} (its listener is {listener})",
        )
        return None
    if spec.tcp_gateway is not None:
        report.warning(field, f"not applied: {where} is a tcpGateway, with no HTTP listener")
        return None
    stamp = option.metadata.creation_timestamp
    age = (
        "~" if stamp is None else (stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp))
    )
    return (0 if target.section_name else 1, age, option.metadata.name)
