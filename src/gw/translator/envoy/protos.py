"""Envoy's messages as Envoy 1.40 defines them, where the generated protos gw builds with
(`xds-protos`) lag behind: a descriptor pool with the fields they miss.

Some fields gw must write are new in 1.40 and replace ones 1.40 deprecates (a deprecated
field works today and breaks on an Envoy upgrade): the compressor's `content_type_matcher`,
the OpenTelemetry access logger's own `grpc_service`, `log_name` and
`filter_state_objects_to_log` (in place of `common_config`). One is new and required: a
health check's `name`, when a cluster has several. `POOL` holds the generated
descriptors with those fields added (numbers and types as in Envoy 1.40's own protos);
`message()` makes a message of it from a generated one. Dumps that render `Any` through
`POOL` (`translator/dump.py`) show the added fields like the others.
"""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

_FIELD = descriptor_pb2.FieldDescriptorProto
#: File → message → fields Envoy 1.40 has: (name, number, type, label, message type).
_ADDED: dict[str, dict[str, tuple[tuple[str, int, int, int, str], ...]]] = {
    "envoy/extensions/filters/http/compressor/v3/compressor.proto": {
        "Compressor.CommonDirectionConfig": (
            (
                "content_type_matcher",
                4,
                _FIELD.TYPE_MESSAGE,
                _FIELD.LABEL_REPEATED,
                ".envoy.type.matcher.v3.StringMatcher",
            ),
        ),
    },
    # A cluster's health checks each need a name when there are several (1.40 runs them all).
    "envoy/config/core/v3/health_check.proto": {
        "HealthCheck": (("name", 27, _FIELD.TYPE_STRING, _FIELD.LABEL_OPTIONAL, ""),),
    },
    "envoy/extensions/access_loggers/open_telemetry/v3/logs_service.proto": {
        "OpenTelemetryAccessLogConfig": (
            (
                "grpc_service",
                9,
                _FIELD.TYPE_MESSAGE,
                _FIELD.LABEL_OPTIONAL,
                ".envoy.config.core.v3.GrpcService",
            ),
            ("log_name", 10, _FIELD.TYPE_STRING, _FIELD.LABEL_OPTIONAL, ""),
            ("filter_state_objects_to_log", 13, _FIELD.TYPE_STRING, _FIELD.LABEL_REPEATED, ""),
        ),
    },
}


#: The files the added fields' types are in (imported by the file that gains them).
_IMPORTS = {
    "envoy/extensions/filters/http/compressor/v3/compressor.proto": (
        "envoy/type/matcher/v3/string.proto",
    ),
}


class _Files:
    """The generated files, with `_ADDED`'s fields, as a descriptor database."""

    def __init__(self) -> None:
        self.generated = descriptor_pool.Default()

    def FindFileByName(self, name: str) -> descriptor_pb2.FileDescriptorProto:  # noqa: N802
        out = descriptor_pb2.FileDescriptorProto()
        self.generated.FindFileByName(name).CopyToProto(out)
        for imported in _IMPORTS.get(name, ()):
            if imported not in out.dependency:
                self.generated.FindFileByName(imported)  # loaded, so that POOL finds it
                out.dependency.append(imported)
        for path, fields in _ADDED.get(name, {}).items():
            message = _message_proto(out, path)
            for field_name, number, kind, label, type_name in fields:
                message.field.add(
                    name=field_name,
                    number=number,
                    type=kind,
                    label=label,
                    type_name=type_name or None,
                    json_name=_camel(field_name),
                )
        return out

    def FindFileContainingSymbol(self, symbol: str) -> descriptor_pb2.FileDescriptorProto:  # noqa: N802
        return self.FindFileByName(self.generated.FindFileContainingSymbol(symbol).name)

    def FindFileContainingExtension(  # noqa: N802
        self, extendee: str, number: int
    ) -> descriptor_pb2.FileDescriptorProto:
        raise KeyError(extendee)

    def FindAllExtensionNumbers(self, extendee: str) -> list[int]:  # noqa: N802
        return []


def _message_proto(
    file: descriptor_pb2.FileDescriptorProto, path: str
) -> descriptor_pb2.DescriptorProto:
    head, *rest = path.split(".")
    message = next(m for m in file.message_type if m.name == head)
    for part in rest:
        message = next(m for m in message.nested_type if m.name == part)
    return message


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


POOL = descriptor_pool.DescriptorPool(descriptor_db=_Files())


def readable(generated: Message) -> Message:
    """`generated`, or its `POOL` copy when it may hold `_ADDED` fields as unknown fields
    (`merge_added`), so that a view of it shows them; other messages are returned as they
    are (copying every message would cost every dump a fifth more)."""
    return message(generated) if _holds_added(generated.DESCRIPTOR.full_name) else generated


@functools.cache
def _holds_added(full_name: str) -> bool:
    """Whether a message of this type contains, outside an `Any`, a message `_ADDED`
    gives fields to."""
    generated = descriptor_pool.Default()
    added = {
        f"{generated.FindFileByName(file).package}.{path}"
        for file, paths in _ADDED.items()
        for path in paths
    }
    seen: set[str] = set()
    todo = [generated.FindMessageTypeByName(full_name)]
    while todo:
        descriptor = todo.pop()
        if descriptor.full_name in added:
            return True
        if descriptor.full_name in seen or descriptor.full_name == "google.protobuf.Any":
            continue
        seen.add(descriptor.full_name)
        todo += [f.message_type for f in descriptor.fields if f.message_type is not None]
    return False


def merge_added(generated: Message, **fields: object) -> None:
    """Set `_ADDED` fields on a generated message, which keeps them as unknown fields (and
    serializes them) for messages that must stay of their generated class: those that sit
    in a generated message's fields rather than in an `Any`."""
    added: Any = message(type(generated)())
    for name, value in fields.items():
        setattr(added, name, value)
    generated.MergeFromString(added.SerializeToString())


def message(generated: Message) -> Message:
    """`generated` as the same message of `POOL` (whose fields `_ADDED` may then be set)."""
    descriptor = POOL.FindMessageTypeByName(generated.DESCRIPTOR.full_name)
    out: Message = message_factory.GetMessageClass(descriptor)()
    out.ParseFromString(generated.SerializeToString(deterministic=True))
    return out
