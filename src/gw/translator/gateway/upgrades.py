"""`upgrades` on a route → `ir.Upgrade`s: WebSocket and CONNECT enabled or disabled on the
route (`enabled` unset: enabled), and `connectTerminate` (Envoy ends the CONNECT and sends
the payload to the upstream as raw TCP). Each kind at most once, as Envoy requires."""

from __future__ import annotations

from gw.api.upgrades import ProtocolUpgradeConfig
from gw.translator import ir
from gw.translator.reports import ResourceReport

_KINDS = (
    ("websocket", "websocket", False),
    ("connect", "CONNECT", False),
    ("connect_terminate", "CONNECT", True),
)


def build_upgrades(
    upgrades: list[ProtocolUpgradeConfig] | None, field: str, report: ResourceReport
) -> tuple[ir.Upgrade, ...] | None:
    """The upgrades; None after an error."""
    if not upgrades:
        return ()
    out: list[ir.Upgrade] = []
    for i, upgrade in enumerate(upgrades):
        where = f"{field}[{i}]"
        set_ = [(a, kind, end) for a, kind, end in _KINDS if getattr(upgrade, a) is not None]
        if len(set_) != 1:
            report.error(
                where, "an upgrade needs exactly one of websocket, connect and connectTerminate"
            )
            return None
        attr, kind, terminate = set_[0]
        if any(u.kind == kind for u in out):
            report.error(where, f"upgrade config {kind} is not unique")
            return None
        spec = getattr(upgrade, attr)
        out.append(ir.Upgrade(kind=kind, enabled=spec.enabled, terminate=terminate))  # type: ignore[arg-type]
    return tuple(out)
