"""`httpGateway.options.gzip` → `ir.Gzip`: responses compressed for clients that accept
gzip (Envoy's compressor filter with its gzip library), with the established field names
and zlib's limits checked here."""

from __future__ import annotations

from gw.api.http_listener_options import Gzip
from gw.translator import ir
from gw.translator.gateway.headers import line_break_problem
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options.gzip"
#: Envoy's limits of its gzip library, and of the compressor filter's type list.
_MEMORY_LEVEL = (1, 9)
_WINDOW_BITS = (9, 15)
_MIN_CONTENT_LENGTH = 30
_MAX_CONTENT_TYPES = 50


def build_gzip(gzip: Gzip, report: ResourceReport) -> ir.Gzip | None:
    errors = len(report.errors)
    for name, camel, (low, high) in (
        ("memory_level", "memoryLevel", _MEMORY_LEVEL),
        ("window_bits", "windowBits", _WINDOW_BITS),
    ):
        value = getattr(gzip, name)
        if value is not None and not low <= value <= high:
            report.error(f"{FIELD}.{camel}", f"{value} is not between {low} and {high}")
    length = gzip.content_length
    if length is not None and length < _MIN_CONTENT_LENGTH:
        report.error(
            f"{FIELD}.contentLength",
            f"{length} is below {_MIN_CONTENT_LENGTH} bytes, the smallest Envoy compresses",
        )
    if len(gzip.content_type) > _MAX_CONTENT_TYPES:
        report.error(f"{FIELD}.contentType", f"at most {_MAX_CONTENT_TYPES} content types")
    for i, content_type in enumerate(gzip.content_type):
        if not content_type or line_break_problem(content_type) is not None:
            report.error(f"{FIELD}.contentType[{i}]", "a media type such as application/json")
    if len(report.errors) > errors:
        return None
    return ir.Gzip(
        memory_level=gzip.memory_level,
        min_content_length=length,
        compression_level=gzip.compression_level or "DEFAULT",
        compression_strategy=gzip.compression_strategy or "DEFAULT",
        content_types=tuple(gzip.content_type),
        disable_on_etag_header=gzip.disable_on_etag_header,
        remove_accept_encoding_header=gzip.remove_accept_encoding_header,
        window_bits=gzip.window_bits,
    )
