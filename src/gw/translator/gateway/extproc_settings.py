"""The Settings' processors (`extProcEarly`, `extProc`, `extProcLate`) → `ir.ExtProcServer`:
the gRPC Upstream each calls (`grpcService.extProcServerRef`), where its filter sits in
gw's chain (`filterStage`, see `slot_of`), and how it is called. `asyncMode: true` is
refused: Envoy's ext_proc filter always waits for the processor."""

from __future__ import annotations

import json
from collections.abc import Callable

from gw import api
from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.extproc import (
    ExtProcSettings,
    FilterStage,
    GrpcService,
    HeaderMutationRules,
    ProcessingMode,
)
from gw.api.matching import ListStringMatcher
from gw.translator import ir
from gw.translator.gateway.matching import regex, string_match
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.ir.extproc import Slot, Variant  # Literal aliases, not IR types
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

#: Variant → the field that holds it (Settings, virtual host and route options alike).
FIELDS: dict[Variant, str] = {
    "early": "extProcEarly",
    "regular": "extProc",
    "late": "extProcLate",
}
ATTRS: dict[Variant, str] = {
    "early": "ext_proc_early",
    "regular": "ext_proc",
    "late": "ext_proc_late",
}

_SLOTS: dict[str, tuple[Slot, Slot]] = {
    # stage: (slot for Before, slot for During and After)
    "FaultStage": ("first", "after_fault"),
    "CorsStage": ("after_fault", "after_cors"),
    "WafStage": ("after_cors", "after_cors"),
    "AuthNStage": ("after_cors", "after_authn"),
    "AuthZStage": ("after_authn", "after_authn"),
    "RateLimitStage": ("after_authz", "after_ratelimit"),
    "AcceptedStage": ("after_ratelimit", "after_ratelimit"),
    "OutAuthStage": ("after_ratelimit", "after_ratelimit"),
    "RouteStage": ("after_ratelimit", "last"),
}


def slot_of(stage: FilterStage | None) -> Slot:
    """Where a processor declared at `stage` runs in gw's chain (unset: the proto's zero
    value, FaultStage/During). gw's chain keeps its own order of the established stages:
    see docs/traffic-policies.md."""
    stage = stage or FilterStage()
    before, other = _SLOTS[stage.stage]
    return before if stage.predicate == "Before" else other


def server_builder(
    variant: Variant,
) -> Callable[[api.Settings, Refs, ResourceReport], ir.ExtProcServer | None]:
    def build(
        settings: api.Settings, refs: Refs, report: ResourceReport
    ) -> ir.ExtProcServer | None:
        declared: ExtProcSettings | None = getattr(settings.spec, ATTRS[variant])
        if declared is None:
            return None
        field = f"spec.{FIELDS[variant]}"
        if variant == "late" and declared.filter_stage is not None:
            report.warning(
                f"{field}.filterStage", "ignored: extProcLate always runs last, before the router"
            )
        service = grpc_target(
            declared.grpc_service, f"{field}.grpcService", settings.key, refs, report
        )
        refuse_async(declared.async_mode, field, report)
        rules = declared.forward_rules
        return ir.ExtProcServer(
            variant=variant,
            slot="last" if variant == "late" else slot_of(declared.filter_stage),
            service=service,
            failure_mode_allow=bool(declared.failure_mode_allow),
            processing_mode=processing_mode(declared.processing_mode),
            request_attributes=tuple(declared.request_attributes),
            response_attributes=tuple(declared.response_attributes),
            message_timeout_ms=_ms(declared.message_timeout),
            max_message_timeout_ms=_ms(declared.max_message_timeout),
            stat_prefix=declared.stat_prefix,
            mutation_rules=_mutation_rules(
                declared.mutation_rules, f"{field}.mutationRules", report
            ),
            disable_clear_route_cache=declared.disable_clear_route_cache,
            allowed_headers=_headers(
                rules.allowed_headers if rules else None,
                f"{field}.forwardRules.allowedHeaders",
                report,
            ),
            disallowed_headers=_headers(
                rules.disallowed_headers if rules else None,
                f"{field}.forwardRules.disallowedHeaders",
                report,
            ),
            filter_metadata=json.dumps(declared.filter_metadata, sort_keys=True)
            if declared.filter_metadata
            else None,
            allow_mode_override=declared.allow_mode_override,
            metadata_namespaces=tuple(declared.metadata_context_namespaces),
            typed_metadata_namespaces=tuple(declared.typed_metadata_context_namespaces),
        )

    return build


def grpc_target(
    service: GrpcService | None,
    field: str,
    referrer: ResourceKey,
    refs: Refs,
    report: ResourceReport,
    *,
    needs_http2: bool = False,
) -> ir.GrpcTarget | None:
    ref = service.ext_proc_server_ref if service else None
    if service is None or ref is None:
        report.error(
            f"{field}.extProcServerRef",
            "required: name the Upstream of the external processing server",
        )
        return None
    where = f"{field}.extProcServerRef"
    key = refs.key(api.Upstream, ref, referrer)
    found = refs.resolve(api.Upstream, ref, referrer=referrer, field=where)
    if found is None:
        report.error(where, f"Upstream {key.namespace}.{key.name} not found")
        return None
    if needs_http2 and not found.spec.use_http2:
        report.error(
            where,
            f"Upstream {key.namespace}.{key.name} must set useHttp2: true: the processor "
            "speaks gRPC (the Settings' own processors are made HTTP/2 for you)",
        )
        return None
    retry = service.retry_policy
    back_off = retry.retry_back_off if retry else None
    return ir.GrpcTarget(
        cluster=cluster_name(key.name, key.namespace),
        authority=service.authority,
        timeout_ms=_ms(service.timeout),
        initial_metadata=tuple((h.key.lower(), h.value) for h in service.initial_metadata),
        retry_base_interval_ms=_ms(back_off.base_interval) if back_off else None,
        retry_max_interval_ms=_ms(back_off.max_interval) if back_off else None,
        retries=retry.num_retries if retry else None,
    )


def refuse_async(async_mode: bool | None, field: str, report: ResourceReport) -> None:
    if async_mode:
        report.error(
            f"{field}.asyncMode",
            "asyncMode is not supported: Envoy's ext_proc filter always waits for the "
            "processor (use processingMode to send less); remove it or set it to false",
        )


def _ms(text: str | None) -> int | None:
    return None if text is None else int(duration_ms(text))


def processing_mode(mode: ProcessingMode | None) -> ir.ProcessingMode | None:
    if mode is None:
        return None
    return ir.ProcessingMode(**mode.model_dump())


def _mutation_rules(
    rules: HeaderMutationRules | None, field: str, report: ResourceReport
) -> ir.MutationRules | None:
    if rules is None:
        return None
    allow = rules.allow_expression.regex if rules.allow_expression else None
    disallow = rules.disallow_expression.regex if rules.disallow_expression else None
    for name, pattern in (("allowExpression", allow), ("disallowExpression", disallow)):
        if pattern is not None:
            regex(pattern, f"{field}.{name}.regex", report)
    return ir.MutationRules(
        allow_all_routing=rules.allow_all_routing,
        allow_envoy=rules.allow_envoy,
        disallow_system=rules.disallow_system,
        disallow_all=rules.disallow_all,
        allow_expression=allow,
        disallow_expression=disallow,
        disallow_is_error=rules.disallow_is_error,
    )


def _headers(
    matchers: ListStringMatcher | None, field: str, report: ResourceReport
) -> tuple[ir.StringMatch, ...]:
    if matchers is None:
        return ()
    if not matchers.patterns:
        report.error(f"{field}.patterns", "needs at least one pattern")
    built = (
        string_match(m, f"{field}.patterns[{i}]", report) for i, m in enumerate(matchers.patterns)
    )
    return tuple(m for m in built if m is not None)
