"""ext_authz: Envoy asks the extauth server (gRPC) about each request of a guarded host.

The filter is on a listener only when one of its hosts uses extauth, and there it is
*disabled by default*: a host or route turns it on with an `ExtAuthzPerRoute` that names its
AuthConfig in `context_extensions.config_id`. Hosts without extauth never pay for the call
(a Python check costs ~300 µs of CPU, ENVOY-NOTES.md §3). Facts that shape it (§2e): the
timeout is `grpc_service.timeout`, the cluster must be HTTP/2, and a down or slow server
gives 403 with an empty body unless `status_on_error` is set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import config_source_pb2, grpc_service_pb2
from envoy.extensions.filters.http.ext_authz.v3 import ext_authz_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import string_pb2
from envoy.type.v3 import http_status_pb2
from google.protobuf import duration_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack


class ExtAuthz:
    name = names.EXT_AUTHZ

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        guarded = [v for v in vhosts if v.uses_extauth]
        if not guarded:
            return None
        servers = sorted(
            {v.extauth_server for v in guarded if v.extauth_server is not None},
            key=lambda s: s.cluster,
        )
        server = servers[0] if servers else None
        return hcm_pb2.HttpFilter(
            name=self.name,
            typed_config=pack(build_ext_authz(server)),
            # Off unless a host or route turns it on with its AuthConfig.
            disabled=True,
        )

    def per_virtual_host(self, vhost: ir.VirtualHost) -> ext_authz_pb2.ExtAuthzPerRoute | None:
        if vhost.extauth is None or vhost.extauth.config_id is None:
            return None
        return _check(vhost.extauth.config_id)

    def per_route(
        self, vhost: ir.VirtualHost, route: ir.Route
    ) -> ext_authz_pb2.ExtAuthzPerRoute | None:
        if route.extauth is None:
            return None
        if route.extauth.config_id is None:
            if vhost.extauth is None or vhost.extauth.config_id is None:
                return None  # nothing to switch off
            off: ext_authz_pb2.ExtAuthzPerRoute = ext_authz_pb2.ExtAuthzPerRoute(disabled=True)
            return off
        return _check(route.extauth.config_id)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_ext_authz(server: ir.ExtAuthServer | None) -> ext_authz_pb2.ExtAuthz:
    """The listener's ext_authz config; without a server it calls a cluster that does not
    exist, so that every guarded request is denied rather than let through."""
    timeout_ms = server.timeout_ms if server else 200
    out = ext_authz_pb2.ExtAuthz(
        grpc_service=grpc_service_pb2.GrpcService(
            envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
                cluster_name=server.cluster if server else names.EXTAUTH_SERVER_MISSING
            ),
            timeout=duration_pb2.Duration(
                seconds=timeout_ms // 1000, nanos=(timeout_ms % 1000) * 1_000_000
            ),
        ),
        transport_api_version=config_source_pb2.V3,
        failure_mode_allow=bool(server and server.failure_mode_allow),
        metadata_context_namespaces=server.metadata_namespaces if server else (),
    )
    # Only the headers the server's checks read (host, path and method always go along).
    headers = server.request_headers if server else ()
    if headers is not None:  # None: every header
        out.allowed_headers.CopyFrom(
            string_pb2.ListStringMatcher(
                patterns=[
                    string_pb2.StringMatcher(exact=h, ignore_case=True)
                    for h in headers or ("host",)  # the matcher needs one; host always goes
                ]
            )
        )
    if server is not None and server.status_on_error is not None:
        out.status_on_error.CopyFrom(http_status_pb2.HttpStatus(code=server.status_on_error))
    return out


def _check(config_id: str) -> ext_authz_pb2.ExtAuthzPerRoute:
    out: ext_authz_pb2.ExtAuthzPerRoute = ext_authz_pb2.ExtAuthzPerRoute(
        check_settings=ext_authz_pb2.CheckSettings(context_extensions={"config_id": config_id})
    )
    return out
