"""Rate limits on virtual hosts and routes, and the Settings that name the rate-limit server.

- `options.rateLimitConfigs.refs` (host or route) name RateLimitConfigs whose actions Envoy
  runs; the descriptors go to the rate-limit server, which counts them in Redis.
- `options.localRatelimit` is a token bucket in each Envoy; no server involved.
- A route's limits replace its host's (each kind on its own: a route with only a local
  limit keeps the host's global ones), as Envoy's most specific per-route config wins.
- Settings `ratelimitServer.ratelimitServerRef` names the server's Upstream; a host that
  uses RateLimitConfigs without it is rejected (fail closed: no silent "unlimited").
  `SERVER` is this server's kind for `servers.py`, which does that for every server alike.
"""

from __future__ import annotations

import dataclasses

from gw import api
from gw.api import ResourceKey
from gw.api.duration import duration_ms
from gw.api.ratelimit import LocalRateLimit, RateLimitConfigRefs
from gw.api.virtualservice import RouteOptions, VirtualHostOptions
from gw.translator import ir
from gw.translator.gateway.ratelimitconfig import compile_config
from gw.translator.gateway.servers import ServerKind
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport

SERVER_FIELD = "spec.ratelimitServer.ratelimitServerRef"
#: Envoy refuses a token bucket that refills faster than this.
MIN_FILL_INTERVAL_MS = 50
#: The options naming RateLimitConfigs: (model attribute, manifest field).
_CONFIG_FIELDS = (
    ("rate_limit_configs", "rateLimitConfigs"),
    ("rate_limit_early_configs", "rateLimitEarlyConfigs"),
    ("rate_limit_regular_configs", "rateLimitRegularConfigs"),
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
        if options.local_ratelimit is None and not any(
            getattr(options, attr) for attr, _ in _CONFIG_FIELDS
        ):
            return None
        policies = {
            attr: self._refs(getattr(options, attr), f"{field}.{name}")
            for attr, name in _CONFIG_FIELDS
        }
        local = options.local_ratelimit
        built_local = _local(local, f"{field}.localRatelimit", self.report) if local else None
        if not any(policies.values()) and built_local is None:
            return None
        return ir.RateLimits(
            policies=policies["rate_limit_configs"],
            early=policies["rate_limit_early_configs"],
            regular=policies["rate_limit_regular_configs"],
            local=built_local,
        )

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


def build_local_limit(
    local: LocalRateLimit, field: str, report: ResourceReport
) -> ir.LocalLimit | None:
    """A token bucket Envoy accepts, or None after reporting why not (`field`: where)."""
    return _local(local, field, report)


def _local(local: LocalRateLimit, field: str, report: ResourceReport) -> ir.LocalLimit | None:
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
    if server.grpc_service is not None:
        report.error(
            "spec.ratelimitServer.grpcService",
            "grpcService is not supported by this gw build: name the server's Upstream "
            "in ratelimitServerRef",
        )
    cluster = None
    ref = server.ratelimit_server_ref
    if ref is not None:
        key = refs.key(api.Upstream, ref, settings.key)
        if refs.resolve(api.Upstream, ref, referrer=settings.key, field=SERVER_FIELD) is None:
            report.error(SERVER_FIELD, f"Upstream {key.namespace}.{key.name} not found")
        cluster = cluster_name(key.name, key.namespace)
    return ir.RateLimitServer(
        cluster=cluster,
        timeout_ms=max(1, int(duration_ms(server.request_timeout))),
        deny_on_fail=server.deny_on_fail,
        x_ratelimit_headers=server.enable_x_ratelimit_headers,
        before_auth=server.rate_limit_before_auth,
    )


def attach_ratelimit_server(
    vhost: ir.VirtualHost, server: ir.RateLimitServer | None
) -> ir.VirtualHost:
    """Every host with limits gets the server's settings, local limits included (they
    read `x_ratelimit_headers`)."""
    if not _limited(vhost) or vhost.ratelimit_server == server:
        return vhost
    return dataclasses.replace(vhost, ratelimit_server=server)


def _global_fields(vs: api.VirtualService) -> list[str]:
    """Fields of `vs` that send requests to the rate-limit server."""
    vhost = vs.spec.virtual_host
    if vhost is None:
        return []
    blocks: list[tuple[str, VirtualHostOptions | RouteOptions | None]]
    blocks = [("spec.virtualHost.options", vhost.options)]
    blocks += [
        (f"spec.virtualHost.routes[{i}].options", route.options)
        for i, route in enumerate(vhost.routes)
    ]
    return [
        f"{where}.{name}"
        for where, options in blocks
        if options is not None
        for attr, name in _CONFIG_FIELDS
        if (refs := getattr(options, attr)) is not None and refs.refs
    ]


def _limited(vhost: ir.VirtualHost) -> bool:
    return vhost.ratelimit is not None or any(r.ratelimit is not None for r in vhost.routes)


SERVER = ServerKind(
    field=SERVER_FIELD,
    missing="no rate limit server configured",
    build=build_ratelimit_server,
    needs=_global_fields,
    attach=attach_ratelimit_server,
)
