"""Response compression with gzip."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Gzip:
    """Responses of at least `min_content_length` bytes (Envoy's default 30 when None) and
    of one of `content_types` (Envoy's list of text types when empty) are compressed for
    clients that accept gzip. `None` leaves zlib's own defaults."""

    memory_level: int | None = None
    min_content_length: int | None = None
    compression_level: Literal["DEFAULT", "BEST", "SPEED"] = "DEFAULT"
    compression_strategy: Literal["DEFAULT", "FILTERED", "HUFFMAN", "RLE"] = "DEFAULT"
    content_types: tuple[str, ...] = ()
    disable_on_etag_header: bool = False
    remove_accept_encoding_header: bool = False
    window_bits: int | None = None
