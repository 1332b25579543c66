"""`bufferPerRoute` (virtual host, route, weighted destination) → `ir.BufferLimit`: the
request body is buffered whole up to `buffer.maxRequestBytes` (413 beyond it), or
buffering is switched off where a wider level set it (`disabled: true`). Exactly one."""

from __future__ import annotations

from gw.api.buffer import BufferPerRoute
from gw.translator import ir
from gw.translator.reports import ResourceReport

_MAX = 2**32 - 1


def build_buffer(
    buffer: BufferPerRoute | None, field: str, report: ResourceReport
) -> ir.BufferLimit | None:
    if buffer is None:
        return None
    if (buffer.disabled is not None) == (buffer.buffer is not None):
        report.error(field, "bufferPerRoute needs exactly one of disabled: true and buffer")
        return None
    if buffer.disabled is not None:
        if not buffer.disabled:
            report.error(
                f"{field}.disabled",
                "disabled may only be true (to switch buffering off); remove bufferPerRoute "
                "to keep the wider setting",
            )
            return None
        return ir.BufferLimit(disabled=True)
    assert buffer.buffer is not None
    size = buffer.buffer.max_request_bytes
    if size is None or not 0 < size <= _MAX:
        report.error(
            f"{field}.buffer.maxRequestBytes",
            f"maxRequestBytes must be between 1 and {_MAX}, received {size}",
        )
        return None
    return ir.BufferLimit(max_request_bytes=size)
