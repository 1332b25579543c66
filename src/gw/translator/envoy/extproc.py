"""The Settings' external processors → Envoy `ext_proc` filters, and what virtual hosts
and routes change about them → `ExtProcPerRoute` configs.

A processor's filter sits where its `filterStage` puts it: `ExtProcFilter`s stand at each
spot of `filters.py`'s chain, and only the one at the processor's slot emits it (filter
name `gw.ext_proc.<variant>`, which per-route configs are keyed by). Every host gets every
declared processor (`gateway/extproc.py`). A Gateway's own processor replaces the Settings'
one on its listener, or switches it off there (`ir.ListenerExtProc`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from envoy.config.common.mutation_rules.v3 import mutation_rules_pb2
from envoy.config.core.v3 import base_pb2, grpc_service_pb2
from envoy.extensions.filters.http.ext_proc.v3 import ext_proc_pb2, processing_mode_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from google.protobuf import json_format, struct_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.matching import milliseconds, string_matcher
from gw.translator.envoy.packing import pack
from gw.translator.ir.extproc import Slot, Variant  # Literal aliases, not IR types

_Mode = processing_mode_pb2.ProcessingMode


class ExtProcFilter:
    """The `variant` processor's filter, if its Settings place it at `slot`."""

    def __init__(self, variant: Variant, slot: Slot) -> None:
        self.variant = variant
        self.slot = slot
        self.name = names.ext_proc_filter(variant)
        #: Only the last slot's filter says what hosts and routes change (`_per_route`).
        self.configures_routes = slot == "last"

    def _server(self, vhost: ir.VirtualHost) -> ir.ExtProcServer | None:
        for server in vhost.ext_proc_servers or ():
            if server.variant == self.variant and server.slot == self.slot:
                return server
        return None

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        for vhost in vhosts:
            server = self._server(vhost) if vhost.ext_proc_servers else None
            if server is not None:
                config = pack(build_processor(server))
                return hcm_pb2.HttpFilter(name=self.name, typed_config=config)
        return None

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        """The listener's own processor replaces the Settings' one there (at its own
        slot); switched off there, the Settings' one is on the chain disabled, so that a
        host or route that overrides it switches it on."""
        own = next((p for p in listener.plugins.ext_proc if p.variant == self.variant), None)
        if own is None:
            return self.listener_filter(vhosts)
        if own.server is not None:
            if own.server.slot != self.slot:
                return None
            config = pack(build_processor(own.server))
            return hcm_pb2.HttpFilter(name=self.name, typed_config=config)
        built = self.listener_filter(vhosts)
        if built is not None:
            built.disabled = True
        return built

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        changes = vhost.traffic.ext_proc if vhost.traffic is not None else ()
        return self._per_route(vhost, changes)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        changes = route.traffic.ext_proc if route.traffic is not None else ()
        return self._per_route(vhost, changes)

    def _per_route(
        self, vhost: ir.VirtualHost, changes: Sequence[ir.ExtProcRoute]
    ) -> Message | None:
        """One filter of the variant says it (the last one): the processor a host's
        listener runs may sit at another slot than the Settings' one, or be the
        listener's own."""
        if self.slot != "last" or not changes:
            return None
        change = next((c for c in changes if c.variant == self.variant), None)
        return None if change is None else build_per_route(change)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_processor(server: ir.ExtProcServer) -> ext_proc_pb2.ExternalProcessor:
    assert server.service is not None
    out = ext_proc_pb2.ExternalProcessor(
        grpc_service=_grpc_service(server.service),
        failure_mode_allow=server.failure_mode_allow,
        request_attributes=list(server.request_attributes),
        response_attributes=list(server.response_attributes),
    )
    if server.processing_mode is not None:
        out.processing_mode.CopyFrom(_mode(server.processing_mode))
    if server.message_timeout_ms is not None:
        out.message_timeout.CopyFrom(milliseconds(server.message_timeout_ms))
    if server.max_message_timeout_ms is not None:
        out.max_message_timeout.CopyFrom(milliseconds(server.max_message_timeout_ms))
    if server.stat_prefix:
        out.stat_prefix = server.stat_prefix
    if server.mutation_rules is not None:
        out.mutation_rules.CopyFrom(_mutation_rules(server.mutation_rules))
    if server.disable_clear_route_cache is not None:
        out.disable_clear_route_cache = server.disable_clear_route_cache
    for matchers, target in (
        (server.allowed_headers, out.forward_rules.allowed_headers),
        (server.disallowed_headers, out.forward_rules.disallowed_headers),
    ):
        if matchers:
            target.CopyFrom(
                string_pb2.ListStringMatcher(patterns=[string_matcher(m) for m in matchers])
            )
    if server.filter_metadata is not None:
        out.filter_metadata.CopyFrom(
            json_format.ParseDict(json.loads(server.filter_metadata), struct_pb2.Struct())
        )
    if server.allow_mode_override is not None:
        out.allow_mode_override = server.allow_mode_override
    _metadata(out.metadata_options, server.metadata_namespaces, server.typed_metadata_namespaces)
    return out


def build_per_route(change: ir.ExtProcRoute) -> ext_proc_pb2.ExtProcPerRoute:
    if change.disabled or change.overrides is None:
        return ext_proc_pb2.ExtProcPerRoute(disabled=True)
    given = change.overrides
    out = ext_proc_pb2.ExtProcOverrides(
        request_attributes=list(given.request_attributes),
        response_attributes=list(given.response_attributes),
    )
    if given.processing_mode is not None:
        out.processing_mode.CopyFrom(_mode(given.processing_mode))
    if given.service is not None:
        out.grpc_service.CopyFrom(_grpc_service(given.service))
    _metadata(out.metadata_options, given.metadata_namespaces, given.typed_metadata_namespaces)
    return ext_proc_pb2.ExtProcPerRoute(overrides=out)


def _grpc_service(target: ir.GrpcTarget) -> grpc_service_pb2.GrpcService:
    out = grpc_service_pb2.GrpcService(
        envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
            cluster_name=target.cluster, authority=target.authority or ""
        ),
        initial_metadata=[base_pb2.HeaderValue(key=k, value=v) for k, v in target.initial_metadata],
    )
    if target.timeout_ms is not None:
        out.timeout.CopyFrom(milliseconds(target.timeout_ms))
    if target.retries is not None:
        out.retry_policy.num_retries.value = target.retries
    if target.retry_base_interval_ms is not None:
        back_off = out.retry_policy.retry_back_off
        back_off.base_interval.CopyFrom(milliseconds(target.retry_base_interval_ms))
        if target.retry_max_interval_ms is not None:
            back_off.max_interval.CopyFrom(milliseconds(target.retry_max_interval_ms))
    return out


def _mode(mode: ir.ProcessingMode) -> processing_mode_pb2.ProcessingMode:
    return _Mode(
        request_header_mode=_Mode.HeaderSendMode.Value(mode.request_header_mode),
        response_header_mode=_Mode.HeaderSendMode.Value(mode.response_header_mode),
        request_body_mode=_Mode.BodySendMode.Value(mode.request_body_mode),
        response_body_mode=_Mode.BodySendMode.Value(mode.response_body_mode),
        request_trailer_mode=_Mode.HeaderSendMode.Value(mode.request_trailer_mode),
        response_trailer_mode=_Mode.HeaderSendMode.Value(mode.response_trailer_mode),
    )


def _mutation_rules(rules: ir.MutationRules) -> mutation_rules_pb2.HeaderMutationRules:
    out = mutation_rules_pb2.HeaderMutationRules()
    for flag, target in (
        (rules.allow_all_routing, out.allow_all_routing),
        (rules.allow_envoy, out.allow_envoy),
        (rules.disallow_system, out.disallow_system),
        (rules.disallow_all, out.disallow_all),
        (rules.disallow_is_error, out.disallow_is_error),
    ):
        if flag is not None:
            target.value = flag
    if rules.allow_expression is not None:
        out.allow_expression.CopyFrom(regex_pb2.RegexMatcher(regex=rules.allow_expression))
    if rules.disallow_expression is not None:
        out.disallow_expression.CopyFrom(regex_pb2.RegexMatcher(regex=rules.disallow_expression))
    return out


def _metadata(
    target: ext_proc_pb2.MetadataOptions, untyped: tuple[str, ...], typed: tuple[str, ...]
) -> None:
    if untyped or typed:
        target.forwarding_namespaces.untyped.extend(untyped)
        target.forwarding_namespaces.typed.extend(typed)


def at(slot: Slot) -> tuple[ExtProcFilter, ...]:
    """The early and regular processors' filters at `slot` (and the late one, last)."""
    variants: tuple[Variant, ...] = ("early", "regular")
    if slot == "last":
        variants = ("early", "regular", "late")
    return tuple(ExtProcFilter(v, slot) for v in variants)
