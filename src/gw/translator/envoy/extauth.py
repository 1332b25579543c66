"""ext_authz: Envoy asks an auth server about each request of a guarded host: gw's extauth
server (gRPC, with the AuthConfig's id) or a custom one (`customAuth`).

The filter is on a listener only when one of its hosts uses extauth, and there it is
*disabled by default*: a host or route turns it on with an `ExtAuthzPerRoute` that names its
AuthConfig in `context_extensions.config_id` (or carries `customAuth`'s context
extensions, and for a named server its service, which overrides the filter's). Hosts
without extauth never pay for the call (a Python check costs ~300 µs of CPU, ENVOY-NOTES.md
§3). Facts that shape it (§2e): the gRPC timeout is `grpc_service.timeout`, the cluster must
be HTTP/2, and a down or slow server gives 403 with an empty body unless `status_on_error`
is set. Only the request headers the servers read go along (`allowed_headers`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import base_pb2, config_source_pb2, grpc_service_pb2, http_uri_pb2
from envoy.extensions.filters.http.ext_authz.v3 import ext_authz_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from envoy.type.v3 import http_status_pb2
from google.protobuf import duration_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import extauth_http, names
from gw.translator.envoy.packing import pack
from gw.wire import extauth_apikey, extauth_oidc, extauth_passthrough
from gw.wire.extauth import AuthConfig, Check

#: An HTTP auth server is addressed through its cluster; Envoy needs some URI all the same.
HTTP_SERVER_URI = "http://not-used.example.com/"


class ExtAuthListenerFilter:
    """A filter of the extauth family, placed on a listener by its hosts' servers."""

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        return self._filter(vhosts, None)

    def for_listener(
        self, listener: ir.Listener, vhosts: Sequence[ir.VirtualHost]
    ) -> hcm_pb2.HttpFilter | None:
        """A Gateway's own `extauth` settings replace the Settings' on its listener."""
        return self._filter(vhosts, listener.plugins.extauth_server)

    def _filter(
        self, vhosts: Sequence[ir.VirtualHost], own: ir.ExtAuthServer | None
    ) -> hcm_pb2.HttpFilter | None:
        raise NotImplementedError


class ExtAuthz(ExtAuthListenerFilter):
    name = names.EXT_AUTHZ

    def _filter(
        self, vhosts: Sequence[ir.VirtualHost], own: ir.ExtAuthServer | None
    ) -> hcm_pb2.HttpFilter | None:
        guarded = [v for v in vhosts if v.uses_extauth]
        if not guarded:
            return None
        servers = sorted(
            {v.extauth_server for v in guarded if v.extauth_server is not None},
            key=lambda s: s.cluster or "",
        )
        server = own or (servers[0] if servers else None)
        config = build_ext_authz(server)
        if extauth_http.http_checks_for(vhosts, own) is not None:
            extauth_http.gate(config)
            extauth_http.send_request_id(config)
        return hcm_pb2.HttpFilter(
            name=self.name,
            typed_config=pack(config),
            # Off unless a host or route turns it on with its AuthConfig.
            disabled=True,
        )

    def checks(self, vhost: ir.VirtualHost, extauth: ir.ExtAuth | None) -> bool:
        """This filter checks requests guarded by `extauth`: unless session passes moved
        the gRPC checks of an AuthConfig answered over HTTP to `gw.ext_authz.fallback`."""
        active = extauth is not None and extauth.active
        return active and not extauth_http.checked_by_fallback(vhost, extauth)

    def per_virtual_host(self, vhost: ir.VirtualHost) -> ext_authz_pb2.ExtAuthzPerRoute | None:
        if not self.checks(vhost, vhost.extauth):
            return None
        assert vhost.extauth is not None
        return check_settings(vhost.extauth, vhost.extauth_server)

    def per_route(
        self, vhost: ir.VirtualHost, route: ir.Route
    ) -> ext_authz_pb2.ExtAuthzPerRoute | None:
        if route.extauth is None:
            return None
        if not self.checks(vhost, route.extauth):
            if not self.checks(vhost, vhost.extauth):
                return None  # nothing to switch off
            off: ext_authz_pb2.ExtAuthzPerRoute = ext_authz_pb2.ExtAuthzPerRoute(disabled=True)
            return off
        return check_settings(route.extauth, vhost.extauth_server)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


class ExtAuthzHttp(ExtAuthz):
    """The HTTP checks' filter, in front of the gRPC one (`extauth_http.py`); placed on a
    listener as the gRPC one is."""

    name = names.EXT_AUTHZ_HTTP

    def _filter(
        self, vhosts: Sequence[ir.VirtualHost], own: ir.ExtAuthServer | None
    ) -> hcm_pb2.HttpFilter | None:
        server = extauth_http.http_checks_for(vhosts, own)
        if server is None:
            return None
        config = build_ext_authz(server)
        config.http_service.CopyFrom(extauth_http.http_service(server))  # replaces gRPC
        extauth_http.send_request_id(config)
        extauth_http.gate_http(config, server)
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config), disabled=True)

    def per_virtual_host(self, vhost: ir.VirtualHost) -> ext_authz_pb2.ExtAuthzPerRoute | None:
        server = vhost.extauth_server
        if server is None or not server.over_http(vhost.extauth):
            return None
        return ext_authz_pb2.ExtAuthzPerRoute(check_settings=ext_authz_pb2.CheckSettings())

    def per_route(
        self, vhost: ir.VirtualHost, route: ir.Route
    ) -> ext_authz_pb2.ExtAuthzPerRoute | None:
        server = vhost.extauth_server
        if route.extauth is None or server is None:
            return None
        if server.over_http(route.extauth):
            return ext_authz_pb2.ExtAuthzPerRoute(check_settings=ext_authz_pb2.CheckSettings())
        if server.over_http(vhost.extauth):
            return ext_authz_pb2.ExtAuthzPerRoute(disabled=True)
        return None


def build_ext_authz(server: ir.ExtAuthServer | None) -> ext_authz_pb2.ExtAuthz:
    """The listener's ext_authz config; without a server it calls a cluster that does not
    exist, so that every guarded request is denied rather than let through."""
    default = (server.default if server else None) or ir.AuthService(
        cluster=names.EXTAUTH_SERVER_MISSING
    )
    out = ext_authz_pb2.ExtAuthz(
        transport_api_version=config_source_pb2.V3,
        failure_mode_allow=bool(server and server.failure_mode_allow),
        metadata_context_namespaces=server.metadata_namespaces if server else (),
        clear_route_cache=bool(server and server.clear_route_cache),
        stat_prefix=(server.stat_prefix or "") if server else "",
    )
    if default.http is not None:
        out.http_service.CopyFrom(_http_service(default))
    else:
        out.grpc_service.CopyFrom(_grpc_service(default))
    if server is not None and server.max_request_bytes is not None:
        out.with_request_body.CopyFrom(
            ext_authz_pb2.BufferSettings(
                max_request_bytes=server.max_request_bytes,
                allow_partial_message=server.allow_partial_message,
                pack_as_bytes=server.pack_as_bytes,
            )
        )
    headers = server.request_headers if server else ()
    if headers is not None:  # None: every header
        patterns = [string_pb2.StringMatcher(exact=h, ignore_case=True) for h in headers]
        patterns += [_regex(p) for p in (server.request_header_patterns if server else ())]
        # The matcher needs one pattern; `host` always goes along anyway.
        out.allowed_headers.CopyFrom(
            string_pb2.ListStringMatcher(
                patterns=patterns or [string_pb2.StringMatcher(exact="host")]
            )
        )
    if server is not None and server.status_on_error is not None:
        out.status_on_error.CopyFrom(http_status_pb2.HttpStatus(code=server.status_on_error))
    return out


def check_settings(
    extauth: ir.ExtAuth, server: ir.ExtAuthServer | None
) -> ext_authz_pb2.ExtAuthzPerRoute:
    settings = ext_authz_pb2.CheckSettings()
    if extauth.config_id is not None:
        settings.context_extensions["config_id"] = extauth.config_id
    custom = extauth.custom
    if custom is not None:
        settings.context_extensions.update(dict(custom.context_extensions))
        service = dict(server.named).get(custom.name) if server and custom.name else None
        if service is not None and service.http is not None:
            settings.http_service.CopyFrom(_http_service(service))
        elif service is not None:
            settings.grpc_service.CopyFrom(_grpc_service(service))
    out: ext_authz_pb2.ExtAuthzPerRoute = ext_authz_pb2.ExtAuthzPerRoute(check_settings=settings)
    return out


def _grpc_service(service: ir.AuthService) -> grpc_service_pb2.GrpcService:
    return grpc_service_pb2.GrpcService(
        envoy_grpc=grpc_service_pb2.GrpcService.EnvoyGrpc(
            cluster_name=service.cluster, authority=service.authority or ""
        ),
        timeout=_duration(service.timeout_ms),
    )


def _http_service(service: ir.AuthService) -> ext_authz_pb2.HttpService:
    http = service.http
    assert http is not None
    return ext_authz_pb2.HttpService(
        server_uri=http_uri_pb2.HttpUri(
            uri=HTTP_SERVER_URI, cluster=service.cluster, timeout=_duration(service.timeout_ms)
        ),
        path_prefix=http.path_prefix,
        authorization_request=ext_authz_pb2.AuthorizationRequest(
            headers_to_add=[base_pb2.HeaderValue(key=k, value=v) for k, v in http.headers_to_add],
        ),
        authorization_response=ext_authz_pb2.AuthorizationResponse(
            allowed_upstream_headers=_names(http.allowed_upstream_headers),
            allowed_upstream_headers_to_append=_names(http.allowed_upstream_headers_to_append),
            allowed_client_headers=_names(http.allowed_client_headers),
        ),
    )


def _names(headers: tuple[str, ...]) -> string_pb2.ListStringMatcher | None:
    if not headers:
        return None
    return string_pb2.ListStringMatcher(
        patterns=[string_pb2.StringMatcher(exact=h, ignore_case=True) for h in headers]
    )


def _regex(pattern: str) -> string_pb2.StringMatcher:
    return string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex=pattern))


def _duration(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


#: Headers a client legitimately sends to hosts without extauth: never stripped (on a
#: guarded route the server overwrites them).
CLIENT_HEADERS = frozenset({"authorization", "cookie"})


def server_headers(auth_configs: Iterable[AuthConfig]) -> tuple[str, ...]:
    """The request headers the extauth server sets (replacing any a client sent) for these
    AuthConfigs: an OIDC session's token and claim headers, an API key's metadata headers,
    the user id header, what passthrough services overwrite. Listeners strip them from
    every client request before routing, so that no upstream sees a forged copy."""
    found: set[str] = set()
    for config in auth_configs:
        if config.user_id_header:
            found.add(config.user_id_header)
        for step in config.steps:
            found.update(_set_by(step.check))
    return tuple(sorted(h.lower() for h in found if h.lower() not in CLIENT_HEADERS))


def _set_by(check: Check) -> Iterable[str]:
    match check:
        case extauth_oidc.OidcAuthorizationCode():
            claims = (*check.identity_token_claims, *check.access_token_claims)
            yield from (h for h in (check.id_token_header, check.access_token_header) if h)
            yield from (c.header for c in claims if not c.append)
        case extauth_apikey.ApiKeyAuth():
            yield from (m.header for m in check.headers_from_metadata)
        case extauth_passthrough.PassThroughAuth() if check.http is not None:
            yield from check.http.allowed_upstream_headers_to_overwrite
