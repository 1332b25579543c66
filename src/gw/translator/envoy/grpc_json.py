"""`ir.GrpcJsonTranscoder` → Envoy's gRPC-JSON transcoder filter, after authorization and the
rate limits (the established place), so that every check sees the JSON request."""

from __future__ import annotations

import base64
from collections.abc import Sequence

from envoy.extensions.filters.http.grpc_json_transcoder.v3 import transcoder_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.listener_filter import ListenerOnly
from gw.translator.envoy.packing import pack

_Transcoder = transcoder_pb2.GrpcJsonTranscoder


class GrpcJsonFilter(ListenerOnly):
    name = names.GRPC_JSON_TRANSCODER

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        transcoder = listener.plugins.grpc_json
        if transcoder is None:
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(build_transcoder(transcoder)))


def build_transcoder(transcoder: ir.GrpcJsonTranscoder) -> transcoder_pb2.GrpcJsonTranscoder:
    out = _Transcoder(
        services=transcoder.services,
        print_options=_Transcoder.PrintOptions(
            add_whitespace=transcoder.add_whitespace,
            always_print_primitive_fields=transcoder.always_print_primitive_fields,
            always_print_enums_as_ints=transcoder.always_print_enums_as_ints,
            preserve_proto_field_names=transcoder.preserve_proto_field_names,
        ),
        match_incoming_request_route=transcoder.match_incoming_request_route,
        ignored_query_parameters=transcoder.ignored_query_parameters,
        auto_mapping=transcoder.auto_mapping,
        ignore_unknown_query_parameters=transcoder.ignore_unknown_query_parameters,
        convert_grpc_status=transcoder.convert_grpc_status,
    )
    if transcoder.descriptor_set is not None:
        out.proto_descriptor_bin = base64.b64decode(transcoder.descriptor_set)
    else:
        out.proto_descriptor = transcoder.descriptor_file or ""
    return out
