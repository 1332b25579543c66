"""ext_authz over plain HTTP: a second ext_authz filter, in front of the gRPC one, for the
AuthConfigs gw's extauth server answers over HTTP/1.1 (`gateway/extauth_http.py` says
which; `gw.extauth.http_checks` is the server side).

Why: Envoy and grpc.aio spend about 170 µs of CPU on a gRPC check before any auth code
runs, Envoy and an asyncio HTTP/1.1 server about 50 µs (docs/benchmarks.md).

How (facts checked on Envoy 1.40):
- One ext_authz filter has one service, and a route's `check_settings.http_service` does
  not work with a gRPC filter (the request goes out without a path), so HTTP checks get
  their own filter, named `gw.ext_authz.http`, disabled by default like the gRPC one and
  turned on by the hosts and routes whose AuthConfig is answered over HTTP.
- The HTTP service cannot take context extensions: the route carries its AuthConfig in
  its metadata (`gw.extauth`/`config_id`), which `headers_to_add` puts into the
  `x-gw-extauth-config` header with Envoy's `%METADATA(ROUTE:...)%` formatter.
- Envoy turns a 5xx answer from an HTTP auth server into `statusOnError` (403 by default,
  no body), and HTTP carries no dynamic metadata. So the gRPC filter stays on for these
  routes too, and runs unless the HTTP answer said `x-gw-extauth-decided` (which the HTTP
  filter turns into its dynamic metadata, and the gRPC filter's `filter_enabled_metadata`
  reads, inverted): an answer HTTP cannot carry is given by the gRPC check, exactly as
  before.
- The filter-wide settings (timeout, `failureModeAllow`, `statusOnError`, the request
  headers that go along, `clearRouteCache`, `statPrefix`) are the gRPC filter's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import base_pb2, http_uri_pb2
from envoy.extensions.filters.http.ext_authz.v3 import ext_authz_pb2
from envoy.type.matcher.v3 import metadata_pb2, string_pb2, value_pb2
from google.protobuf import struct_pb2

from gw.translator import ir
from gw.translator.envoy.packing import duration
from gw.wire.extauth_pass import SessionPass

#: The route metadata naming a route's AuthConfig for the HTTP check.
METADATA_NAMESPACE = "gw.extauth"
CONFIG_HEADER = "x-gw-extauth-config"
DECIDED_HEADER = "x-gw-extauth-decided"
#: The namespace Envoy's ext_authz filters write their dynamic metadata in (whatever the
#: filter's name).
EXT_AUTHZ_METADATA = "envoy.filters.http.ext_authz"
#: Where `gw.session_pass` puts a verified pass's payload (jwt_authn's namespace).
PAYLOAD_KEY = "gw_session_pass"
JWT_AUTHN_METADATA = "envoy.filters.http.jwt_authn"
FALLBACK_HEADER = "x-gw-extauth-fallback"
#: The HTTP auth server is addressed through its cluster; Envoy needs some URI all the same.
SERVER_URI = "http://extauth-http/"


def http_checks_for(
    vhosts: Sequence[ir.VirtualHost], own: ir.ExtAuthServer | None
) -> ir.ExtAuthServer | None:
    """The server whose HTTP checks this listener's hosts use (None: no HTTP filter). A
    Gateway's own extauth server (`own`) keeps every check on gRPC."""
    if own is not None:
        return None
    for vhost in vhosts:
        server = vhost.extauth_server
        if server is None or server.http_checks is None:
            continue
        if any(server.over_http(e) for e in (vhost.extauth, *(r.extauth for r in vhost.routes))):
            return server
    return None


def gate(out: ext_authz_pb2.ExtAuthz) -> None:
    """Keeps the gRPC filter `out` from running where the HTTP check decided."""
    out.filter_enabled_metadata.CopyFrom(
        metadata_pb2.MetadataMatcher(
            filter=EXT_AUTHZ_METADATA,
            path=[metadata_pb2.MetadataMatcher.PathSegment(key=DECIDED_HEADER)],
            value=value_pb2.ValueMatcher(string_match=string_pb2.StringMatcher(exact="1")),
            invert=True,
        )
    )


def passes_of(server: ir.ExtAuthServer | None) -> tuple[tuple[str, SessionPass], ...]:
    checks = server.http_checks if server is not None else None
    return (checks.passes or ()) if checks is not None else ()


def checked_by_fallback(vhost: ir.VirtualHost, extauth: ir.ExtAuth | None) -> bool:
    """With session passes, the gRPC check of an AuthConfig answered over HTTP is
    `gw.ext_authz.fallback`'s (`envoy/extauth_pass.py`)."""
    server = vhost.extauth_server
    return server is not None and bool(passes_of(server)) and server.over_http(extauth)


def gate_http(out: ext_authz_pb2.ExtAuthz, server: ir.ExtAuthServer) -> None:
    """`gw.ext_authz.http` stays out where a pass verified, and hands on explicitly."""
    if not passes_of(server):
        return
    out.filter_enabled_metadata.CopyFrom(
        metadata_pb2.MetadataMatcher(
            filter=JWT_AUTHN_METADATA,
            path=[metadata_pb2.MetadataMatcher.PathSegment(key=PAYLOAD_KEY)],
            value=value_pb2.ValueMatcher(present_match=True),
            invert=True,
        )
    )
    response = out.http_service.authorization_response
    response.dynamic_metadata_from_headers.patterns.add(exact=FALLBACK_HEADER, ignore_case=True)


def send_request_id(out: ext_authz_pb2.ExtAuthz) -> None:
    """Both filters send `x-request-id`: it pairs a denial the HTTP check could not carry
    with the gRPC check of the same request, which gives it without running the steps
    again."""
    if out.HasField("allowed_headers"):  # unset: every header goes
        out.allowed_headers.patterns.add(exact="x-request-id", ignore_case=True)


def route_metadata(vhost: ir.VirtualHost, route: ir.Route) -> struct_pb2.Struct | None:
    """`gw.extauth: {config_id}` on a route whose requests are checked over HTTP."""
    server = vhost.extauth_server
    extauth = route.extauth if route.extauth is not None else vhost.extauth
    if server is None or extauth is None or not server.over_http(extauth):
        return None
    out = struct_pb2.Struct()
    out.update({"config_id": extauth.config_id})
    return out


def http_service(server: ir.ExtAuthServer) -> ext_authz_pb2.HttpService:
    """The HTTP checks' service; the rest of the filter is the gRPC filter's."""
    checks = server.http_checks
    assert checks is not None
    config = f"%METADATA(ROUTE:{METADATA_NAMESPACE}:config_id)%"
    return ext_authz_pb2.HttpService(
        server_uri=http_uri_pb2.HttpUri(
            uri=SERVER_URI, cluster=checks.cluster, timeout=duration(server.timeout_ms)
        ),
        authorization_request=ext_authz_pb2.AuthorizationRequest(
            headers_to_add=[base_pb2.HeaderValue(key=CONFIG_HEADER, value=config)]
        ),
        authorization_response=ext_authz_pb2.AuthorizationResponse(
            # Never empty: an unset list would let every answer header through.
            allowed_upstream_headers=_names(checks.upstream_headers or (CONFIG_HEADER,)),
            allowed_upstream_headers_to_append=_names(checks.appended_headers),
            allowed_client_headers_on_success=_names(("set-cookie",)),
            dynamic_metadata_from_headers=_names((DECIDED_HEADER,)),
        ),
    )


def _names(headers: Iterable[str]) -> string_pb2.ListStringMatcher | None:
    patterns = [string_pb2.StringMatcher(exact=h, ignore_case=True) for h in headers]
    return string_pb2.ListStringMatcher(patterns=patterns) if patterns else None
