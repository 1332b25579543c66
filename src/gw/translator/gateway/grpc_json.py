"""`httpGateway.options.grpcJsonTranscoder` → `ir.GrpcJsonTranscoder`: JSON clients of gRPC
services (Envoy's gRPC-JSON transcoder filter).

The descriptor set is read here when it is given inline (`protoDescriptorBin`): it must be
a `FileDescriptorSet` holding every service named in `services`, since Envoy refuses the
listener otherwise. A file on the proxy (`protoDescriptor`) is Envoy's to read. gw reads no
ConfigMaps, so `protoDescriptorConfigMap` is refused with the way around it.
"""

from __future__ import annotations

import base64
import binascii

from google.protobuf import descriptor_pb2
from google.protobuf.message import DecodeError

from gw.api.http_listener_options import GrpcJsonTranscoder
from gw.translator import ir
from gw.translator.reports import ResourceReport

FIELD = "spec.httpGateway.options.grpcJsonTranscoder"


def build_grpc_json(
    transcoder: GrpcJsonTranscoder, report: ResourceReport
) -> ir.GrpcJsonTranscoder | None:
    errors = len(report.errors)
    sources = [
        name
        for name, value in (
            ("protoDescriptor", transcoder.proto_descriptor),
            ("protoDescriptorBin", transcoder.proto_descriptor_bin),
            ("protoDescriptorConfigMap", transcoder.proto_descriptor_config_map),
        )
        if value is not None
    ]
    if len(sources) != 1:
        report.error(
            FIELD,
            "set exactly one of protoDescriptor, protoDescriptorBin, protoDescriptorConfigMap",
        )
    if transcoder.proto_descriptor_config_map is not None:
        report.error(
            f"{FIELD}.protoDescriptorConfigMap",
            "gw reads no ConfigMaps: put the descriptor set in protoDescriptorBin (base64)",
        )
    if not transcoder.services:
        report.error(f"{FIELD}.services", "name at least one service, e.g. package.Service")
    if transcoder.proto_descriptor_bin is not None:
        _check_descriptor_set(transcoder.proto_descriptor_bin, transcoder.services, report)
    if transcoder.proto_descriptor is not None and not transcoder.proto_descriptor.startswith("/"):
        report.error(f"{FIELD}.protoDescriptor", "the descriptor set's absolute path on the proxy")
    if len(report.errors) > errors:
        return None
    printing = transcoder.print_options
    return ir.GrpcJsonTranscoder(
        descriptor_set=transcoder.proto_descriptor_bin,
        descriptor_file=transcoder.proto_descriptor,
        services=tuple(transcoder.services),
        add_whitespace=bool(printing and printing.add_whitespace),
        always_print_primitive_fields=bool(printing and printing.always_print_primitive_fields),
        always_print_enums_as_ints=bool(printing and printing.always_print_enums_as_ints),
        preserve_proto_field_names=bool(printing and printing.preserve_proto_field_names),
        match_incoming_request_route=transcoder.match_incoming_request_route,
        ignored_query_parameters=tuple(transcoder.ignored_query_parameters),
        auto_mapping=transcoder.auto_mapping,
        ignore_unknown_query_parameters=transcoder.ignore_unknown_query_parameters,
        convert_grpc_status=transcoder.convert_grpc_status,
    )


def _check_descriptor_set(text: str, services: list[str], report: ResourceReport) -> None:
    field = f"{FIELD}.protoDescriptorBin"
    try:
        files = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, DecodeError):
        report.error(field, "is not a FileDescriptorSet in base64 (protoc --descriptor_set_out)")
        return
    known = {
        f"{file.package}.{service.name}" if file.package else service.name
        for file in files.file
        for service in file.service
    }
    for i, name in enumerate(services):
        if name not in known:
            listed = ", ".join(sorted(known)) or "none"
            report.error(
                f"{FIELD}.services[{i}]",
                f"{name} is not in the descriptor set (its services: {listed})",
            )
