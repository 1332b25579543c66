"""A Gateway's say on the Settings' external processors (`httpGateway.options.extProcEarly`,
`extProc`, `extProcLate` and their `disableExtProc*` switches) → `ir.ListenerExtProc`.

A listener's own block is merged over the Settings' processor field by field (a shallow
merge: each field it sets replaces the Settings' whole), so `extProc: {processingMode:
...}` keeps the Settings' server; without a Settings processor the block must name its
server. `disableExtProc: true` puts the Settings' processor on the listener switched off:
a virtual host or route that overrides it switches it on there.
"""

from __future__ import annotations

from gw import api
from gw.api import ResourceKey
from gw.api.extproc import ExtProcSettings
from gw.api.http_listener_options import HttpListenerOptions
from gw.translator import ir
from gw.translator.gateway.extproc_settings import ATTRS, FIELDS, build_server
from gw.translator.gateway.matchable import merge_fields
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def build_listener_ext_proc(
    options: HttpListenerOptions,
    settings: api.Settings | None,
    field: str,
    *,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> tuple[ir.ListenerExtProc, ...]:
    """A Gateway's `extProc*` (its fields over the Settings' processor: a shallow merge)
    and `disableExtProc*` (the Settings' processor off on this listener, unless a host or
    route overrides it)."""
    out = []
    for variant, name in FIELDS.items():
        own: ExtProcSettings | None = getattr(options, ATTRS[variant])
        switch = "disable" + name[0].upper() + name[1:]
        disabled: bool | None = getattr(options, f"disable_{ATTRS[variant]}")
        declared: ExtProcSettings | None = (
            getattr(settings.spec, ATTRS[variant]) if settings is not None else None
        )
        if own is not None and disabled is not None:
            report.error(f"{field}.{switch}", f"set at most one of {switch} and {name}")
        elif disabled is not None:
            if not disabled:
                report.warning(
                    f"{field}.{switch}", "no effect: false keeps the Settings' processor"
                )
            elif declared is None:
                report.warning(
                    f"{field}.{switch}", f"no effect: the Settings declare no {name} processor"
                )
            else:
                out.append(ir.ListenerExtProc(variant=variant, disabled=True))
        elif own is not None:
            merged = merge_fields(own, declared) or own
            server = build_server(merged, variant, f"{field}.{name}", owner, refs, report)
            if server.service is not None:
                out.append(ir.ListenerExtProc(variant=variant, server=server))
    return tuple(out)
