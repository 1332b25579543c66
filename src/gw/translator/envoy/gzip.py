"""`ir.Gzip` → Envoy's compressor filter with the gzip library. It is early in the chain so
that it is last on the way back: responses are compressed after every other filter has
seen (or changed) them.

The content types compressed go in the response direction's `content_type_matcher`, the
field Envoy 1.40 has in place of the deprecated `content_type` (`protos.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from envoy.config.core.v3 import extension_pb2
from envoy.extensions.compression.gzip.compressor.v3 import gzip_pb2
from envoy.extensions.filters.http.compressor.v3 import compressor_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import wrappers_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names, protos
from gw.translator.envoy.listener_filter import ListenerOnly
from gw.translator.envoy.packing import pack

_LEVELS = {
    "DEFAULT": gzip_pb2.Gzip.DEFAULT_COMPRESSION,
    "BEST": gzip_pb2.Gzip.BEST_COMPRESSION,
    "SPEED": gzip_pb2.Gzip.BEST_SPEED,
}
_STRATEGIES = {
    "DEFAULT": gzip_pb2.Gzip.DEFAULT_STRATEGY,
    "FILTERED": gzip_pb2.Gzip.FILTERED,
    "HUFFMAN": gzip_pb2.Gzip.HUFFMAN_ONLY,
    "RLE": gzip_pb2.Gzip.RLE,
}


class GzipFilter(ListenerOnly):
    name = names.COMPRESSOR

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        gzip = listener.plugins.gzip
        if gzip is None:
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(build_compressor(gzip)))


def build_compressor(gzip: ir.Gzip) -> Message:
    library = gzip_pb2.Gzip(
        compression_level=_LEVELS[gzip.compression_level],
        compression_strategy=_STRATEGIES[gzip.compression_strategy],
    )
    for field, value in (("memory_level", gzip.memory_level), ("window_bits", gzip.window_bits)):
        if value is not None:
            getattr(library, field).CopyFrom(wrappers_pb2.UInt32Value(value=value))
    common = compressor_pb2.Compressor.CommonDirectionConfig()
    if gzip.min_content_length is not None:
        common.min_content_length.CopyFrom(wrappers_pb2.UInt32Value(value=gzip.min_content_length))
    generated = compressor_pb2.Compressor(
        compressor_library=extension_pb2.TypedExtensionConfig(
            name=names.GZIP_COMPRESSOR, typed_config=pack(library)
        ),
        response_direction_config=compressor_pb2.Compressor.ResponseDirectionConfig(
            common_config=common,
            disable_on_etag_header=gzip.disable_on_etag_header,
            remove_accept_encoding_header=gzip.remove_accept_encoding_header,
        ),
    )

    out: Any = protos.message(generated)
    for content_type in gzip.content_types:
        out.response_direction_config.common_config.content_type_matcher.add(exact=content_type)
    result: Message = out
    return result
