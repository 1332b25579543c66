"""JSON clients of gRPC services, through the listener."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class GrpcJsonTranscoder:
    """Requests for the methods of `services` (by their HTTP annotations, or POST
    `/<service>/<method>` with `auto_mapping`) are sent as gRPC and answered as JSON. The
    services' descriptor set is `descriptor_set` (base64 of a `FileDescriptorSet`) or the
    file `descriptor_file` on the proxy."""

    descriptor_set: str | None = None
    descriptor_file: str | None = None
    services: tuple[str, ...]
    add_whitespace: bool = False
    always_print_primitive_fields: bool = False
    always_print_enums_as_ints: bool = False
    preserve_proto_field_names: bool = False
    match_incoming_request_route: bool = False
    ignored_query_parameters: tuple[str, ...] = ()
    auto_mapping: bool = False
    ignore_unknown_query_parameters: bool = False
    convert_grpc_status: bool = False
