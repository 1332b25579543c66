"""Session passes in Envoy (`gateway/extauth_pass.py` says which AuthConfigs have them;
`gw.extauth.session_pass` makes them): a `jwt_authn` filter checks a request's pass
cookie, and the ext_authz filters stay out of a request whose pass verified.

- The filter `gw.session_pass` (before `gw.ext_authz.http`, off by default) has one
  provider per AuthConfig: its cookie, its key (an `oct` JWK), `aud` = the config id, no
  clock skew to speak of, the carried headers as `claim_to_headers` (claims `h0`, `h1`,
  ...), the payload in its dynamic metadata. Each route guarded by such an AuthConfig
  names its requirement: that provider, or *nothing* (`allow_missing_or_failed`): a
  missing, expired, forged or other AuthConfig's pass never gets a 401 here, the request
  just goes on to the extauth server as before. The login's own routes (callback,
  logout) never check a pass: they must reach the server.
- `gw.ext_authz.http` runs unless the pass's payload is in the metadata
  (`filter_enabled_metadata`, inverted).
- The gRPC check behind the HTTP one used to run unless the HTTP answer said "decided";
  a skipped HTTP check says nothing, so that cannot tell it any more (one metadata
  matcher per filter, no "or"). With passes on, the HTTP answer that leaves the decision
  to gRPC says so (`x-gw-extauth-fallback`), and a third ext_authz filter,
  `gw.ext_authz.fallback` (gRPC, the same settings), runs only then, on the routes checked
  over HTTP; the ordinary gRPC filter is switched off on those routes and works as before
  on the others.
- Envoy adds the claim headers; the listener strips client copies of every header the
  extauth server sets before routing (`envoy/hcm.py`), so a client cannot add its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from envoy.config.core.v3 import base_pb2
from envoy.extensions.filters.http.ext_authz.v3 import ext_authz_pb2
from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import metadata_pb2, string_pb2, value_pb2
from google.protobuf import empty_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import extauth_http, names
from gw.translator.envoy.extauth import (
    ExtAuthListenerFilter,
    ExtAuthz,
    build_ext_authz,
)
from gw.translator.envoy.packing import pack
from gw.wire.extauth_pass import SessionPass

#: Envoy's allowance for clock differences (it accepts a pass until `exp` + this, in
#: whole seconds: up to 2s past `exp`); the server ends passes that much earlier.
CLOCK_SKEW_S = 1
#: Verified passes Envoy keeps per AuthConfig (each worker), not to parse them again.
CACHE_SIZE = 4096


def checked(vhost: ir.VirtualHost, extauth: ir.ExtAuth | None) -> SessionPass | None:
    """The pass that lets requests guarded by `extauth` through, if they may have one."""
    server = vhost.extauth_server
    if server is None or extauth is None or extauth.flow is not None:
        return None
    if not server.over_http(extauth) or server.http_checks is None:
        return None
    return server.http_checks.session_pass(extauth.config_id)


def gate_fallback(out: ext_authz_pb2.ExtAuthz) -> None:
    """`gw.ext_authz.fallback` runs only when the HTTP check handed the request on."""
    out.filter_enabled_metadata.CopyFrom(
        metadata_pb2.MetadataMatcher(
            filter=extauth_http.EXT_AUTHZ_METADATA,
            path=[metadata_pb2.MetadataMatcher.PathSegment(key=extauth_http.FALLBACK_HEADER)],
            value=value_pb2.ValueMatcher(string_match=string_pb2.StringMatcher(exact="1")),
        )
    )


class SessionPassFilter(ExtAuthListenerFilter):
    name = names.SESSION_PASS

    def _filter(
        self, vhosts: Sequence[ir.VirtualHost], own: ir.ExtAuthServer | None
    ) -> hcm_pb2.HttpFilter | None:
        passes = extauth_http.passes_of(extauth_http.http_checks_for(vhosts, own))
        if not passes:
            return None
        config = jwt_pb2.JwtAuthentication(
            providers={config_id: _provider(config_id, p) for config_id, p in passes},
            requirement_map={config_id: _requirement(config_id) for config_id, _ in passes},
        )
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config), disabled=True)

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        if checked(vhost, vhost.extauth) is None:
            return None
        assert vhost.extauth is not None
        return _requires(vhost.extauth.config_id)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        if route.extauth is None:
            return None  # the host's
        if checked(vhost, route.extauth) is not None:
            return _requires(route.extauth.config_id)
        if checked(vhost, vhost.extauth) is not None:
            off: Message = jwt_pb2.PerRouteConfig(disabled=True)
            return off
        return None

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


class ExtAuthzFallback(ExtAuthz):
    """The gRPC check of the requests `gw.ext_authz.http` hands on, where passes are on."""

    name = names.EXT_AUTHZ_FALLBACK

    def _filter(
        self, vhosts: Sequence[ir.VirtualHost], own: ir.ExtAuthServer | None
    ) -> hcm_pb2.HttpFilter | None:
        server = extauth_http.http_checks_for(vhosts, own)
        if not extauth_http.passes_of(server):
            return None
        config = build_ext_authz(server)
        gate_fallback(config)
        extauth_http.send_request_id(config)
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config), disabled=True)

    def checks(self, vhost: ir.VirtualHost, extauth: ir.ExtAuth | None) -> bool:
        return extauth_http.checked_by_fallback(vhost, extauth)


def _requires(config_id: str | None) -> Message:
    out: Message = jwt_pb2.PerRouteConfig(requirement_name=config_id)
    return out


def _provider(config_id: str, session_pass: SessionPass) -> jwt_pb2.JwtProvider:
    jwks = {"keys": [{"kty": "oct", "alg": "HS256", "k": session_pass.signing_key}]}
    return jwt_pb2.JwtProvider(
        audiences=[config_id],
        from_cookies=[session_pass.cookie_name],
        local_jwks=base_pb2.DataSource(inline_string=json.dumps(jwks, separators=(",", ":"))),
        payload_in_metadata=extauth_http.PAYLOAD_KEY,
        claim_to_headers=[
            jwt_pb2.JwtClaimToHeader(header_name=header, claim_name=f"h{index}")
            for index, header in enumerate(session_pass.headers)
        ],
        clock_skew_seconds=CLOCK_SKEW_S,
        jwt_cache_config=jwt_pb2.JwtCacheConfig(jwt_cache_size=CACHE_SIZE),
    )


def _requirement(config_id: str) -> jwt_pb2.JwtRequirement:
    return jwt_pb2.JwtRequirement(
        requires_any=jwt_pb2.JwtRequirementOrList(
            requirements=[
                jwt_pb2.JwtRequirement(provider_name=config_id),
                jwt_pb2.JwtRequirement(allow_missing_or_failed=empty_pb2.Empty()),
            ]
        )
    )
