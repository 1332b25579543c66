"""`faults` on a route → `ir.Faults`: an abort (status in [200, 600)) and a delay (at least
1s, as the established API documents: shorter delays are refused), each for a share of
the route's requests."""

from __future__ import annotations

from gw.api.duration import duration_ms
from gw.api.faults import RouteFaults
from gw.translator import ir
from gw.translator.gateway.matching import percentage
from gw.translator.reports import ResourceReport


def build_faults(
    faults: RouteFaults | None, field: str, report: ResourceReport
) -> ir.Faults | None:
    if faults is None or (faults.abort is None and faults.delay is None):
        return None
    errors = len(report.errors)
    abort = delay = None
    if faults.abort is not None:
        status = faults.abort.http_status
        if not 200 <= status < 600:
            report.error(
                f"{field}.abort.httpStatus",
                f"invalid abort status code '{status}', must be in range of [200,600)",
            )
        share = percentage(faults.abort.percentage, f"{field}.abort.percentage", report)
        if share is not None:
            abort = ir.FaultAbort(status=status, share=share)
    if faults.delay is not None:
        fixed = faults.delay.fixed_delay
        delay_ms = int(duration_ms(fixed)) if fixed else 0
        if delay_ms <= 0:
            report.error(
                f"{field}.delay.fixedDelay",
                f"invalid delay duration '{fixed or '0s'}', must be greater than 0",
            )
        elif delay_ms < 1000:
            report.error(
                f"{field}.delay.fixedDelay",
                f"invalid delay duration '{fixed}': a fault delay must be at least 1s",
            )
        share = percentage(faults.delay.percentage, f"{field}.delay.percentage", report)
        if share is not None:
            delay = ir.FaultDelay(delay_ms=delay_ms, share=share)
    if len(report.errors) > errors:
        return None
    return ir.Faults(abort=abort, delay=delay)
