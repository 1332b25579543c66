"""External processing: the processors the Settings declare (one Envoy `ext_proc` filter
each, on every virtual host) and what a virtual host or route changes about them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gw.translator.ir.matching import StringMatch

#: The three processors of the Settings, in the order of their fields there.
Variant = Literal["early", "regular", "late"]
#: Where a processor's filter sits in the chain (`envoy/filters.py` has one spot each).
Slot = Literal[
    "first", "after_fault", "after_cors", "after_authn", "after_authz", "after_ratelimit", "last"
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessingMode:
    request_header_mode: str = "DEFAULT"
    response_header_mode: str = "DEFAULT"
    request_body_mode: str = "NONE"
    response_body_mode: str = "NONE"
    request_trailer_mode: str = "DEFAULT"
    response_trailer_mode: str = "DEFAULT"


@dataclass(frozen=True, slots=True, kw_only=True)
class GrpcTarget:
    """The processor's gRPC service: its cluster and how it is called."""

    cluster: str
    authority: str | None = None
    timeout_ms: int | None = None
    initial_metadata: tuple[tuple[str, str], ...] = ()
    retry_base_interval_ms: int | None = None
    retry_max_interval_ms: int | None = None
    retries: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MutationRules:
    allow_all_routing: bool | None = None
    allow_envoy: bool | None = None
    disallow_system: bool | None = None
    disallow_all: bool | None = None
    allow_expression: str | None = None
    disallow_expression: str | None = None
    disallow_is_error: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtProcServer:
    """One processor of the Settings (`extProcEarly`, `extProc`, `extProcLate`)."""

    variant: Variant
    slot: Slot
    #: None when the Settings name no server (hosts that need it are rejected).
    service: GrpcTarget | None
    failure_mode_allow: bool = False
    processing_mode: ProcessingMode | None = None
    request_attributes: tuple[str, ...] = ()
    response_attributes: tuple[str, ...] = ()
    message_timeout_ms: int | None = None
    max_message_timeout_ms: int | None = None
    stat_prefix: str | None = None
    mutation_rules: MutationRules | None = None
    disable_clear_route_cache: bool | None = None
    allowed_headers: tuple[StringMatch, ...] = ()
    disallowed_headers: tuple[StringMatch, ...] = ()
    #: `filterMetadata` as JSON text (sorted keys).
    filter_metadata: str | None = None
    allow_mode_override: bool | None = None
    metadata_namespaces: tuple[str, ...] = ()
    typed_metadata_namespaces: tuple[str, ...] = ()

    @property
    def cluster(self) -> str | None:
        return None if self.service is None else self.service.cluster


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtProcOverrides:
    processing_mode: ProcessingMode | None = None
    request_attributes: tuple[str, ...] = ()
    response_attributes: tuple[str, ...] = ()
    service: GrpcTarget | None = None
    metadata_namespaces: tuple[str, ...] = ()
    typed_metadata_namespaces: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtProcRoute:
    """A virtual host's or route's change to one processor: off here, or overrides."""

    variant: Variant
    disabled: bool = False
    overrides: ExtProcOverrides | None = None
