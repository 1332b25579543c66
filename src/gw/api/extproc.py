"""External processing: Envoy's `ext_proc` filter calling a gRPC processor that may read and
change requests and responses. Settings `extProcEarly` / `extProc` / `extProcLate` declare
the processors (one filter each, for every virtual host); virtual hosts and routes switch
one off or override parts of it (`RouteSettings`)."""

from __future__ import annotations

from typing import Literal

from pydantic import JsonValue

from gw.api.duration import Duration
from gw.api.headers import HeaderValue
from gw.api.matching import ListStringMatcher, RegexMatcher
from gw.api.meta import Model, ResourceRef

HeaderSendMode = Literal["DEFAULT", "SEND", "SKIP"]
BodySendMode = Literal["NONE", "STREAMED", "BUFFERED", "BUFFERED_PARTIAL"]
Stage = Literal[
    "FaultStage",
    "CorsStage",
    "WafStage",
    "AuthNStage",
    "AuthZStage",
    "RateLimitStage",
    "AcceptedStage",
    "OutAuthStage",
    "RouteStage",
]
Predicate = Literal["During", "Before", "After"]


class FilterStage(Model):
    stage: Stage = "FaultStage"
    predicate: Predicate = "During"


class ProcessingMode(Model):
    request_header_mode: HeaderSendMode = "DEFAULT"
    response_header_mode: HeaderSendMode = "DEFAULT"
    request_body_mode: BodySendMode = "NONE"
    response_body_mode: BodySendMode = "NONE"
    request_trailer_mode: HeaderSendMode = "DEFAULT"
    response_trailer_mode: HeaderSendMode = "DEFAULT"


class RetryBackOff(Model):
    base_interval: Duration | None = None
    max_interval: Duration | None = None


class GrpcRetryPolicy(Model):
    retry_back_off: RetryBackOff | None = None
    num_retries: int | None = None


class GrpcService(Model):
    ext_proc_server_ref: ResourceRef | None = None
    authority: str | None = None
    retry_policy: GrpcRetryPolicy | None = None
    timeout: Duration | None = None
    initial_metadata: list[HeaderValue] = []


class HeaderMutationRules(Model):
    allow_all_routing: bool | None = None
    allow_envoy: bool | None = None
    disallow_system: bool | None = None
    disallow_all: bool | None = None
    allow_expression: RegexMatcher | None = None
    disallow_expression: RegexMatcher | None = None
    disallow_is_error: bool | None = None


class HeaderForwardingRules(Model):
    allowed_headers: ListStringMatcher | None = None
    disallowed_headers: ListStringMatcher | None = None


class ExtProcSettings(Model):
    """One processor (Settings `extProcEarly`, `extProc` or `extProcLate`)."""

    grpc_service: GrpcService | None = None
    filter_stage: FilterStage | None = None
    failure_mode_allow: bool | None = None
    processing_mode: ProcessingMode | None = None
    async_mode: bool | None = None
    request_attributes: list[str] = []
    response_attributes: list[str] = []
    message_timeout: Duration | None = None
    stat_prefix: str | None = None
    mutation_rules: HeaderMutationRules | None = None
    max_message_timeout: Duration | None = None
    disable_clear_route_cache: bool | None = None
    forward_rules: HeaderForwardingRules | None = None
    #: A protobuf Struct: any JSON object, passed to Envoy as it is.
    filter_metadata: dict[str, JsonValue] | None = None
    allow_mode_override: bool | None = None
    metadata_context_namespaces: list[str] = []
    typed_metadata_context_namespaces: list[str] = []


class ExtProcOverrides(Model):
    processing_mode: ProcessingMode | None = None
    async_mode: bool | None = None
    request_attributes: list[str] = []
    response_attributes: list[str] = []
    grpc_service: GrpcService | None = None
    metadata_context_namespaces: list[str] = []
    typed_metadata_context_namespaces: list[str] = []


class ExtProcRouteSettings(Model):
    """On a virtual host or route: exactly one of `disabled: true` and `overrides`."""

    disabled: bool | None = None
    overrides: ExtProcOverrides | None = None
