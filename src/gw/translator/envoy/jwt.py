"""`ir.JwtVerification` → Envoy's `jwt_authn` filter (ENVOY-NOTES.md §2a), twice: one
instance before the ext_authz filter (`gw.jwt_authn.before_extauth`, the hosts'
`jwtStaged.beforeExtAuth`) and one after it (`envoy.filters.http.jwt_authn`, `jwt` and
`jwtStaged.afterExtAuth`). Each is on a listener only when one of its hosts checks there.

Each instance holds the providers of all its listener's hosts and routes for its stage
(names are unique: `<virtual host>_<provider>`, `<virtual host>_route<N>_<provider>`) and
one requirement per host, named after it, plus one per route with providers of its own,
named after the route; a host selects its requirement with `PerRouteConfig.
requirement_name`, a route with its own providers selects its own, and a route that
switches the stage off sets `PerRouteConfig.disabled`. The filter is *disabled by default*
on the listener: a host without JWT at a stage has no per-host config there, so Envoy does
not even create the filter for its requests (any per-host or per-route config turns it on);
a JWT host next to plain ones costs the plain ones nothing.

Every provider verifies into dynamic metadata under its own name (`payload_in_metadata`),
which is where RBAC reads claims, and caches verified tokens (`jwt_cache_config`): without
the cache each request pays a full signature check (ENVOY-NOTES.md §3).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from envoy.config.core.v3 import http_uri_pb2
from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf import duration_pb2, empty_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack

#: Verified tokens remembered per worker; a token is looked up by its bytes.
JWT_CACHE_SIZE = 1000
#: After a failed key-set fetch, try again this soon (Envoy's default, written out).
JWKS_REFETCH_AFTER_FAILURE_MS = 1000


class JwtFilter:
    """The `jwt_authn` instance of one stage: `before` or `after` the extauth filter."""

    def __init__(self, stage: Literal["before", "after"]) -> None:
        self.stage = stage
        self.name = names.JWT_AUTHN if stage == "after" else names.JWT_AUTHN_BEFORE_EXTAUTH

    def _host(self, vhost: ir.VirtualHost) -> ir.JwtVerification | None:
        return vhost.jwt if self.stage == "after" else vhost.jwt_before_extauth

    def _route(self, route: ir.Route) -> ir.RouteJwtStage | None:
        if route.jwt is None:
            return None
        return route.jwt.after_extauth if self.stage == "after" else route.jwt.before_extauth

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        config = jwt_pb2.JwtAuthentication()
        for vhost in vhosts:
            checks = [(vhost.name, self._host(vhost))]
            checks += [(r.name, own.verification) for r in vhost.routes if (own := self._route(r))]
            for name, check in checks:
                if check is None:
                    continue
                for provider in check.providers:
                    config.providers[provider.name].CopyFrom(build_provider(provider))
                config.requirement_map[name].CopyFrom(build_requirement(check))
        if not config.requirement_map:
            return None
        return hcm_pb2.HttpFilter(name=self.name, typed_config=pack(config), disabled=True)

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        if self._host(vhost) is None:
            return None
        config: Message = jwt_pb2.PerRouteConfig(requirement_name=vhost.name)
        return config

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        own = self._route(route)
        if own is None:
            return None
        if own.verification is not None:
            config: Message = jwt_pb2.PerRouteConfig(requirement_name=route.name)
            return config
        if not own.disabled or self._host(vhost) is None:
            return None
        off: Message = jwt_pb2.PerRouteConfig(disabled=True)
        return off

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_requirement(jwt: ir.JwtVerification) -> jwt_pb2.JwtRequirement:
    """One provider: itself; several: any of them (sorted); relaxed policies add the
    allowance as one more alternative."""
    alternatives = [jwt_pb2.JwtRequirement(provider_name=p.name) for p in jwt.providers]
    if jwt.require == "allow_missing":
        alternatives.append(jwt_pb2.JwtRequirement(allow_missing=empty_pb2.Empty()))
    elif jwt.require == "allow_missing_or_failed":
        alternatives.append(jwt_pb2.JwtRequirement(allow_missing_or_failed=empty_pb2.Empty()))
    if len(alternatives) == 1:
        return alternatives[0]
    return jwt_pb2.JwtRequirement(
        requires_any=jwt_pb2.JwtRequirementOrList(requirements=alternatives)
    )


def build_provider(provider: ir.JwtProvider) -> jwt_pb2.JwtProvider:
    out = jwt_pb2.JwtProvider(
        issuer=provider.issuer,
        audiences=list(provider.audiences),
        forward=provider.forward_token,
        from_headers=[
            jwt_pb2.JwtHeader(name=h.name, value_prefix=h.prefix) for h in provider.headers
        ],
        from_params=list(provider.query_params),
        payload_in_metadata=provider.name,
        clock_skew_seconds=provider.clock_skew_seconds,
        jwt_cache_config=jwt_pb2.JwtCacheConfig(jwt_cache_size=JWT_CACHE_SIZE),
        claim_to_headers=[
            jwt_pb2.JwtClaimToHeader(header_name=c.header, claim_name=c.claim)
            for c in provider.claims_to_headers
        ],
        # Routes may match on claim headers: pick the route again once they are set.
        clear_route_cache=bool(provider.claims_to_headers),
    )
    if provider.failed_status_metadata_key is not None:
        out.failed_status_in_metadata = provider.failed_status_metadata_key
    if provider.local_jwks is not None:
        out.local_jwks.inline_string = provider.local_jwks
    elif provider.remote_jwks is not None:
        out.remote_jwks.CopyFrom(build_remote_jwks(provider.remote_jwks))
    return out


def build_remote_jwks(remote: ir.RemoteJwks) -> jwt_pb2.RemoteJwks:
    """Fetched on the main thread in the background (`async_fetch`): the listener does not
    wait for it (`fast_listener`), a failed fetch is retried every second, and until a key
    set arrives requests with tokens fail with 401 instead of hanging."""
    return jwt_pb2.RemoteJwks(
        http_uri=http_uri_pb2.HttpUri(
            uri=remote.url, cluster=remote.cluster, timeout=_duration(remote.timeout_ms)
        ),
        cache_duration=_duration(remote.cache_duration_ms),
        async_fetch=jwt_pb2.JwksAsyncFetch(
            fast_listener=True,
            failed_refetch_duration=_duration(JWKS_REFETCH_AFTER_FAILURE_MS),
        ),
    )


def _duration(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)
