"""`HostCache`: VirtualServices as last built, reused when nothing they can see changed.

Editing one VirtualService among 10,000 should not cost translating 10,000. Each
VirtualService is built on its own (`virtualhosts.build_host`), handing back its
contribution, findings and references as one value (`BuiltHost`); `build_hosts` merges
that value into the build, whether it was just made or taken from the cache. A cached
value is reused only when the VirtualService object is the very one built before and
everything a VirtualService may read is equal to what it was: every resource that is not a
VirtualService, every input error, the options (the clock aside) and `require_rbac`. That
key is deliberately coarse — any change to an upstream, route table, secret, service or
setting rebuilds every host — so that no builder can depend on something the cache does not
see. Hosts with TLS are always rebuilt (certificate expiry depends on the clock).

The cache is an explicit input and output of `translate()`, never module state: the
translator stays a pure function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gw import api
from gw.api import ResourceKey
from gw.snapshot import Snapshot
from gw.translator.gateway.contribution import BuiltHost, Contribution
from gw.translator.gateway.settings import DEFAULT_ROUTES, RoutePolicy
from gw.translator.gateway.virtualhosts import build_host
from gw.translator.options import Options
from gw.translator.refs import Refs
from gw.translator.reports import Reports


@dataclass(frozen=True, slots=True)
class HostCache:
    world: tuple[Any, ...]
    hosts: Mapping[ResourceKey, BuiltHost]

    def reusable(self, world: tuple[Any, ...]) -> Mapping[ResourceKey, BuiltHost]:
        """The cached hosts, when `world` is what they were built in; else nothing."""
        return self.hosts if _same(self.world, world) else {}


def build_hosts(
    snapshot: Snapshot,
    options: Options,
    refs: Refs,
    reports: Reports,
    *,
    require_rbac: bool,
    route_policy: RoutePolicy = DEFAULT_ROUTES,
    cache: HostCache | None,
) -> tuple[dict[ResourceKey, Contribution], HostCache]:
    """Every VirtualService's contribution (placed on the built-in `http`/`https`
    listeners), its findings and references merged into `reports` and `refs`; and the
    cache for the next translation."""
    world = world_of(snapshot, options, (require_rbac, route_policy))
    reusable = cache.reusable(world) if cache is not None else {}
    out: dict[ResourceKey, Contribution] = {}
    kept: dict[ResourceKey, BuiltHost] = {}
    for vs in snapshot.of_kind(api.VirtualService):
        built = reusable.get(vs.key)
        if built is None or built.vs is not vs:
            built = build_host(
                vs,
                snapshot,
                options,
                refs,
                reports,
                require_rbac=require_rbac,
                route_policy=route_policy,
            )
        reports.of(vs.key)  # Accepted unless it has findings
        reports.add(built.findings)
        refs.add(built.edges)
        if built.contribution is not None:
            out[vs.key] = built.contribution
        if cacheable(vs):
            kept[vs.key] = built
    return out, HostCache(world=world, hosts=kept)


def world_of(snapshot: Snapshot, options: Options, settings: Any) -> tuple[Any, ...]:
    """Everything a VirtualService's translation may read besides the VirtualService
    (`settings`: what the Settings say about hosts)."""
    others = tuple(
        (key, resource)
        for key, resource in snapshot.resources.items()
        if key.kind != api.VirtualService.KIND
    )
    return (dataclasses.replace(options, now=None), settings, snapshot.errors, others)


def cacheable(vs: api.VirtualService) -> bool:
    """A host with TLS is rebuilt each time: its certificate's expiry depends on the clock."""
    return vs.spec.ssl_config is None


def _same(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    *old_head, old_others = old
    *new_head, new_others = new
    if old_head != new_head or len(old_others) != len(new_others):
        return False
    return all(
        a_key == b_key and (a is b or a == b)
        for (a_key, a), (b_key, b) in zip(old_others, new_others, strict=True)
    )
