"""Rate limits on virtual hosts and routes, and the Settings that name the rate-limit server.

- Three places, each set by RateLimitConfig refs or inline actions (one or the other, as in
  the established API): `rateLimitConfigs` / `ratelimit` (checked where Settings
  `rateLimitBeforeAuth` says), `rateLimitEarlyConfigs` / `ratelimitEarly` (before
  authentication), `rateLimitRegularConfigs` / `ratelimitRegular` (after authorization).
  Inline actions are matched against Settings `ratelimit`; refs against their configs.
- `ratelimitBasic`: per-user and per-address limits (`ratelimit_basic.py`).
- A local token bucket (no server involved): `localRatelimit`, or the `localRatelimit` of
  one of the inline places (the established API's spelling); one per host or route.
- A route's limits replace its host's (each place on its own: a route with only a local
  limit keeps the host's global ones), as Envoy's most specific per-route config wins;
  a route's inline `includeVhRateLimits: true` adds the host's of that place.
- Settings `ratelimitServer.ratelimitServerRef` names the server's Upstream; a host that
  uses the server without it is rejected (fail closed: no silent "unlimited").
  `SERVER` is this server's kind for `servers.py`, which does that for every server alike.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from gw import api
from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.ratelimit import LocalRateLimit, RateLimitConfigRefs, RateLimitServerSettings
from gw.api.virtualservice import RouteOptions, VirtualHostOptions
from gw.translator import ir
from gw.translator.gateway.ratelimit_basic import build_basic
from gw.translator.gateway.ratelimitconfig import compile_actions, compile_config
from gw.translator.gateway.servers import OptionBlocks, ServerKind, options_field
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport
from gw.wire.ratelimit import SETTINGS_CONFIG

SERVER_FIELD = "spec.ratelimitServer.ratelimitServerRef"
#: Settings `extauth.userIdHeader` when unset (the established install's value).
DEFAULT_USER_ID_HEADER = "x-user-id"
#: Envoy refuses a token bucket that refills faster than this.
MIN_FILL_INTERVAL_MS = 50
#: The places of global limits: (refs attribute, refs field, inline attribute, inline
#: field, where they go in the IR).
Place = Literal["policies", "early", "regular"]
_PLACES: tuple[tuple[str, str, str, str, Place], ...] = (
    ("rate_limit_configs", "rateLimitConfigs", "ratelimit", "ratelimit", "policies"),
    (
        "rate_limit_early_configs",
        "rateLimitEarlyConfigs",
        "ratelimit_early",
        "ratelimitEarly",
        "early",
    ),
    (
        "rate_limit_regular_configs",
        "rateLimitRegularConfigs",
        "ratelimit_regular",
        "ratelimitRegular",
        "regular",
    ),
)
#: Every option that may hold a local token bucket: (model attribute, manifest field).
_INLINE = tuple((inline, field) for _, _, inline, field, _ in _PLACES)
#: Every option `RateLimitResolver.resolve` reads: with none set, there is nothing to do.
_READ = (
    *(refs for refs, _, _, _, _ in _PLACES),
    *(inline for _, _, inline, _, _ in _PLACES),
    "local_ratelimit",
    "ratelimit_basic",
)


class RateLimitResolver:
    """Resolves the rate-limit options of one VirtualService (host and routes)."""

    def __init__(self, refs: Refs, referrer: ResourceKey, report: ResourceReport) -> None:
        self.refs = refs
        self.referrer = referrer
        self.report = report

    def resolve(
        self, options: VirtualHostOptions | RouteOptions, field: str
    ) -> ir.RateLimits | None:
        """The limits an options block asks for (None: none; the host's apply)."""
        if all(getattr(options, attr) is None for attr in _READ):
            return None  # most hosts and routes limit nothing
        places: dict[Place, tuple[ir.Policy, ...]] = {}
        include: list[Place] = []
        for refs_attr, refs_name, inline_attr, inline_name, place in _PLACES:
            configs, inline = getattr(options, refs_attr), getattr(options, inline_attr)
            if configs is not None and inline is not None:
                self.report.error(
                    f"{field}.{inline_name}",
                    f"set one of {inline_name} and {refs_name}, not both",
                )
            elif inline is not None:
                where = f"{field}.{inline_name}.rateLimits"
                places[place] = compile_actions(
                    inline.rate_limits, SETTINGS_CONFIG, where, self.report
                )
                if getattr(inline, "include_vh_rate_limits", False):
                    include.append(place)
            else:
                places[place] = self._refs(configs, f"{field}.{refs_name}")
        local = self._local(options, field)
        basic = build_basic(options.ratelimit_basic, self.referrer, field, self.report)
        if not any(places.values()) and local is None and basic is None:
            return None
        return ir.RateLimits(
            policies=places.get("policies", ()),
            early=places.get("early", ()),
            regular=places.get("regular", ()),
            local=local,
            basic=basic,
            include_host=tuple(include),
        )

    def _local(
        self, options: VirtualHostOptions | RouteOptions, field: str
    ) -> ir.LocalLimit | None:
        buckets = [("localRatelimit", options.local_ratelimit)] + [
            (f"{name}.localRatelimit", getattr(options, attr).local_ratelimit)
            for attr, name in _INLINE
            if getattr(options, attr) is not None
        ]
        set_ = [(name, bucket) for name, bucket in buckets if bucket is not None]
        if len(set_) > 1:
            self.report.error(
                f"{field}.{set_[1][0]}",
                f"one local rate limit per {_level(options)}: {set_[0][0]} is set already",
            )
            return None
        if not set_:
            return None
        name, bucket = set_[0]
        assert bucket is not None
        return local_limit(bucket, f"{field}.{name}", self.report)

    def _refs(self, configs: RateLimitConfigRefs | None, field: str) -> tuple[ir.Policy, ...]:
        if configs is None:
            return ()
        out: list[ir.Policy] = []
        for i, ref in enumerate(configs.refs):
            out.extend(self._policies(ref, f"{field}.refs[{i}]"))
        return tuple(out)

    def _policies(self, ref: api.ResourceRef, field: str) -> tuple[ir.Policy, ...]:
        key = self.refs.key(api.RateLimitConfig, ref, self.referrer)
        found = self.refs.resolve(api.RateLimitConfig, ref, referrer=self.referrer, field=field)
        if found is None:
            self.report.error(field, f"RateLimitConfig {key.namespace}.{key.name} not found")
            return ()
        # Findings about the config itself are reported on it (rejecting it rejects this
        # VirtualService through the reference): a scratch report here.
        built = compile_config(found, ResourceReport())
        return built[1] if built is not None else ()


def _level(options: VirtualHostOptions | RouteOptions) -> str:
    return "route" if isinstance(options, RouteOptions) else "virtual host"


def local_limit(local: LocalRateLimit, field: str, report: ResourceReport) -> ir.LocalLimit | None:
    ok = True
    if local.max_tokens < 1:
        report.error(f"{field}.maxTokens", "must be at least 1 (the bucket's size)")
        ok = False
    tokens_per_fill = 1 if local.tokens_per_fill is None else local.tokens_per_fill
    if tokens_per_fill < 1:
        report.error(f"{field}.tokensPerFill", "must be at least 1 (tokens added per interval)")
        ok = False
    interval = duration_ms(local.fill_interval)
    if interval < MIN_FILL_INTERVAL_MS or interval != int(interval):
        report.error(
            f"{field}.fillInterval",
            f"{local.fill_interval} is too short: Envoy refills a bucket at most every "
            f"{MIN_FILL_INTERVAL_MS}ms (write whole milliseconds, e.g. 1s)",
        )
        ok = False
    if not ok:
        return None
    return ir.LocalLimit(
        max_tokens=local.max_tokens, tokens_per_fill=tokens_per_fill, fill_interval_ms=int(interval)
    )


def build_ratelimit_server(
    settings: api.Settings, refs: Refs, report: ResourceReport
) -> ir.RateLimitServer | None:
    """The server the Settings' `ratelimitServer` block names (None without one; without
    `ratelimitServerRef` it has no cluster, and serves local limits' headers only)."""
    server = settings.spec.ratelimit_server
    if server is None:
        return None
    return ratelimit_server(
        server,
        settings.key,
        "spec.ratelimitServer",
        refs,
        report,
        user_id_header=_user_id_header(settings),
    )


def ratelimit_server(
    server: RateLimitServerSettings,
    owner: ResourceKey,
    field: str,
    refs: Refs,
    report: ResourceReport,
    *,
    user_id_header: str = DEFAULT_USER_ID_HEADER,
) -> ir.RateLimitServer:
    """How Envoy calls the server a `ratelimitServer` block (at `field` of `owner`)
    describes: the Settings' or a Gateway's own (`user_id_header`: Settings
    `extauth.userIdHeader`, what `ratelimitBasic` counts users by)."""
    cluster = None
    ref = server.ratelimit_server_ref
    if ref is not None:
        where = f"{field}.ratelimitServerRef"
        key = refs.key(api.Upstream, ref, owner)
        if refs.resolve(api.Upstream, ref, referrer=owner, field=where) is None:
            report.error(where, f"Upstream {key.namespace}.{key.name} not found")
        cluster = cluster_name(key.name, key.namespace)
    return ir.RateLimitServer(
        cluster=cluster,
        timeout_ms=max(1, int(duration_ms(server.request_timeout))),
        deny_on_fail=server.deny_on_fail,
        x_ratelimit_headers=server.enable_x_ratelimit_headers,
        before_auth=server.rate_limit_before_auth,
        user_id_header=user_id_header,
        authority=server.grpc_service.authority if server.grpc_service else "",
    )


def _user_id_header(settings: api.Settings) -> str:
    extauth = settings.spec.extauth
    header = extauth.user_id_header if extauth is not None else None
    return (header or DEFAULT_USER_ID_HEADER).lower()


def attach_ratelimit_server(
    vhost: ir.VirtualHost, server: ir.RateLimitServer | None
) -> ir.VirtualHost:
    """Every host with limits gets the server's settings, local limits included (they
    read `x_ratelimit_headers`)."""
    if not _limited(vhost) or vhost.ratelimit_server == server:
        return vhost
    return dataclasses.replace(vhost, ratelimit_server=server)


def _global_fields(blocks: OptionBlocks) -> list[str]:
    """Fields of the blocks that send requests to the rate-limit server."""
    return [
        f"{options_field(index)}.{name}"
        for index, options in blocks
        for name in _server_fields(options)
    ]


def _server_fields(options: VirtualHostOptions | RouteOptions) -> list[str]:
    """The fields of one options block that send requests to the rate-limit server."""
    out = [
        refs_name
        for refs_attr, refs_name, _, _, _ in _PLACES
        if (refs := getattr(options, refs_attr)) is not None and refs.refs
    ]
    out += [
        f"{name}.rateLimits"
        for attr, name in _INLINE
        if (inline := getattr(options, attr)) is not None and inline.rate_limits
    ]
    basic = options.ratelimit_basic
    if basic is not None and (basic.authorized_limits or basic.anonymous_limits):
        out.append("ratelimitBasic")
    return out


def _limited(vhost: ir.VirtualHost) -> bool:
    return vhost.ratelimit is not None or any(r.ratelimit is not None for r in vhost.routes)


SERVER = ServerKind(
    field=SERVER_FIELD,
    missing="no rate limit server configured",
    build=build_ratelimit_server,
    needs=_global_fields,
    attach=attach_ratelimit_server,
)
