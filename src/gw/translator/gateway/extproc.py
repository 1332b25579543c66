"""External processing. Settings `extProcEarly`, `extProc` and `extProcLate` each declare a
processor: its gRPC Upstream (`grpcService.extProcServerRef`, spoken to over HTTP/2), where
its filter sits (`filterStage`; `extProcLate` is always last), and how it is called. Every
virtual host gets every declared processor. A virtual host's or route's `extProc*` option
(built here) switches one off there (`disabled: true`) or overrides parts of it
(`overrides`); one that overrides a processor the Settings do not declare is rejected
(`servers.py`).

The Settings' side is `extproc_settings.py`. The three kinds (`SERVERS`) plug into
`servers.py` like the extauth and rate-limit servers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from gw.api import ResourceKey
from gw.api.extproc import ExtProcOverrides, ExtProcRouteSettings
from gw.translator import ir
from gw.translator.gateway.extproc_settings import (
    ATTRS,
    FIELDS,
    grpc_target,
    processing_mode,
    refuse_async,
    server_builder,
)
from gw.translator.gateway.servers import OptionBlocks, ServerKind, options_field
from gw.translator.ir.extproc import Variant  # Literal aliases, not IR types
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def build_ext_proc_routes(
    options: object, field: str, *, refs: Refs, owner: ResourceKey, report: ResourceReport
) -> tuple[ir.ExtProcRoute, ...]:
    """A virtual host's or route's `extProcEarly` / `extProc` / `extProcLate`."""
    out = []
    for variant, name in FIELDS.items():
        settings: ExtProcRouteSettings | None = getattr(options, ATTRS[variant], None)
        if settings is None:
            continue
        where = f"{field}.{name}"
        if (settings.disabled is None) == (settings.overrides is None):
            report.error(where, "set exactly one of disabled: true and overrides")
            continue
        if settings.disabled is not None:
            if not settings.disabled:
                report.error(
                    f"{where}.disabled",
                    "disabled may only be true; remove it to keep the processor",
                )
                continue
            out.append(ir.ExtProcRoute(variant=variant, disabled=True))
            continue
        assert settings.overrides is not None
        overrides = _overrides(settings.overrides, f"{where}.overrides", refs, owner, report)
        out.append(ir.ExtProcRoute(variant=variant, overrides=overrides))
    return tuple(out)


def _overrides(
    overrides: ExtProcOverrides, field: str, refs: Refs, owner: ResourceKey, report: ResourceReport
) -> ir.ExtProcOverrides:
    refuse_async(overrides.async_mode, field, report)
    service = None
    if overrides.grpc_service is not None:
        service = grpc_target(
            overrides.grpc_service, f"{field}.grpcService", owner, refs, report, needs_http2=True
        )
    return ir.ExtProcOverrides(
        processing_mode=processing_mode(overrides.processing_mode),
        request_attributes=tuple(overrides.request_attributes),
        response_attributes=tuple(overrides.response_attributes),
        service=service,
        metadata_namespaces=tuple(overrides.metadata_context_namespaces),
        typed_metadata_namespaces=tuple(overrides.typed_metadata_context_namespaces),
    )


def _attacher(
    variant: Variant,
) -> Callable[[ir.VirtualHost, ir.ExtProcServer | None], ir.VirtualHost]:
    def attach(vhost: ir.VirtualHost, server: ir.ExtProcServer | None) -> ir.VirtualHost:
        """Every host gets the Settings' processors (they apply to all traffic)."""
        if not vhost.ext_proc_servers and (server is None or server.service is None):
            return vhost  # none to add, none to take away (most hosts)
        kept = tuple(s for s in vhost.ext_proc_servers or () if s.variant != variant)
        servers = kept if server is None or server.service is None else (*kept, server)
        if servers == (vhost.ext_proc_servers or ()):
            return vhost
        return dataclasses.replace(vhost, ext_proc_servers=servers or None)

    return attach


def _needs(variant: Variant) -> Callable[[OptionBlocks], list[str]]:
    def needs(blocks: OptionBlocks) -> list[str]:
        """The fields that override the processor (switching it off needs none)."""
        return [
            f"{options_field(index)}.{FIELDS[variant]}"
            for index, options in blocks
            if (settings := getattr(options, ATTRS[variant], None)) is not None
            and settings.overrides is not None
        ]

    return needs


def _kind(variant: Variant) -> ServerKind[ir.ExtProcServer]:
    return ServerKind(
        field=f"spec.{FIELDS[variant]}.grpcService.extProcServerRef",
        missing=f"no external processing server configured for {FIELDS[variant]}",
        build=server_builder(variant),
        needs=_needs(variant),
        attach=_attacher(variant),
    )


#: The three processors, for `passes.SERVERS`.
SERVERS = (_kind("early"), _kind("regular"), _kind("late"))
