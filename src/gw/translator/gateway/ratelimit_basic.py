"""`ratelimitBasic` (virtual host or route): the established gateway's simple limits, per
user for requests the extauth server identified (`authorizedLimits`, keyed by the user id it
puts in Settings `extauth.userIdHeader`) and per client address for the others
(`anonymousLimits`).

Each host or route with such limits is a scope of its own (its resource and field path, so
that a route's counters are never its host's); the VirtualService's scopes make one
rate-limit server config (`basic_configs`, id `gw:basic:<namespace>.<name>`), a tree per
scope: `gw.basic = <scope>`, then `gw.user = <any>` (authorized) or `gw.anonymous = true`
and `remote_address = <any>` (anonymous). Envoy's actions for it are made in stage 2
(`envoy/ratelimit_basic.py`), where it is known whether extauth runs on each route.
"""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.ratelimit import IngressRateLimit, RateLimit
from gw.translator import ir
from gw.translator.reports import ResourceReport
from gw.wire import ratelimit
from gw.wire.ratelimit import (
    BASIC_ANONYMOUS_KEY,
    BASIC_SCOPE_KEY,
    BASIC_USER_KEY,
    basic_config_id,
)

#: The value of the anonymous marker entry.
ANONYMOUS = "true"


def build_basic(
    basic: IngressRateLimit | None, referrer: ResourceKey, field: str, report: ResourceReport
) -> ir.BasicLimits | None:
    if basic is None:
        return None
    if basic.authorized_limits is None and basic.anonymous_limits is None:
        report.warning(
            f"{field}.ratelimitBasic",
            "no effect: set authorizedLimits, anonymousLimits or both",
        )
        return None
    return ir.BasicLimits(
        scope=f"{referrer.namespace}.{referrer.name}:{field}",
        authorized=_limit(basic.authorized_limits),
        anonymous=_limit(basic.anonymous_limits),
    )


def _limit(limit: RateLimit | None) -> ir.CountLimit | None:
    if limit is None:
        return None
    return ir.CountLimit(unit=limit.unit, requests_per_unit=limit.requests_per_unit)


def basic_configs(vhost: ir.VirtualHost) -> tuple[ratelimit.RateLimitConfig, ...]:
    """The rate-limit server's config for the `ratelimitBasic` limits of `vhost` and its
    routes (none when there are none)."""
    scopes: dict[str, ir.BasicLimits] = {}
    for limits in (vhost.ratelimit, *(r.ratelimit for r in vhost.routes)):
        if limits is not None and limits.basic is not None:
            scopes.setdefault(limits.basic.scope, limits.basic)
    if not scopes:
        return ()
    source = vhost.source
    return (
        ratelimit.RateLimitConfig(
            config_id=basic_config_id(source.namespace, source.name),
            namespace=source.namespace,
            name=source.name,
            descriptors=tuple(_tree(scopes[scope]) for scope in sorted(scopes)),
        ),
    )


def _tree(basic: ir.BasicLimits) -> ratelimit.Descriptor:
    children = []
    if basic.authorized is not None:
        children.append(ratelimit.Descriptor(key=BASIC_USER_KEY, limit=_wire(basic.authorized)))
    if basic.anonymous is not None:
        address = ratelimit.Descriptor(key="remote_address", limit=_wire(basic.anonymous))
        children.append(
            ratelimit.Descriptor(key=BASIC_ANONYMOUS_KEY, value=ANONYMOUS, descriptors=(address,))
        )
    return ratelimit.Descriptor(key=BASIC_SCOPE_KEY, value=basic.scope, descriptors=tuple(children))


def _wire(limit: ir.CountLimit) -> ratelimit.Limit:
    return ratelimit.Limit(unit=limit.unit, requests_per_unit=limit.requests_per_unit)
