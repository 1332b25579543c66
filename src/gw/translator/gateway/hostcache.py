"""`HostCache`: stage-1 results of VirtualServices, reused when nothing they can see changed.

Editing one VirtualService among 10,000 should not cost translating 10,000. A cached
result is reused only when the VirtualService object is the very one built before and
everything a VirtualService may read is equal to what it was: every resource that is not a
VirtualService, every input error, the options (the clock aside) and `require_rbac`. That
key is deliberately coarse — any change to an upstream, secret, service or setting rebuilds
every host — so that no builder can depend on something the cache does not see. Hosts with
TLS are always rebuilt (certificate expiry depends on the clock).

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
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution
from gw.translator.options import Options
from gw.translator.refs import Edge
from gw.translator.reports import Finding


@dataclass(frozen=True, slots=True)
class BuiltHost:
    """What building one VirtualService produced: its virtual host (before the listener's
    port variants are added), what it contributes (after), its findings and the references
    it resolved."""

    vs: api.VirtualService
    vhost: ir.VirtualHost | None
    contribution: Contribution | None
    errors: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    edges: tuple[Edge, ...]


@dataclass(frozen=True, slots=True)
class HostCache:
    world: tuple[Any, ...]
    hosts: Mapping[ResourceKey, BuiltHost]

    def reusable(self, world: tuple[Any, ...]) -> Mapping[ResourceKey, BuiltHost]:
        """The cached hosts, when `world` is what they were built in; else nothing."""
        return self.hosts if _same(self.world, world) else {}


def world_of(snapshot: Snapshot, options: Options, require_rbac: bool) -> tuple[Any, ...]:
    """Everything a VirtualService's translation may read besides the VirtualService."""
    others = tuple(
        (key, resource)
        for key, resource in snapshot.resources.items()
        if key.kind != api.VirtualService.KIND
    )
    return (dataclasses.replace(options, now=None), require_rbac, snapshot.errors, others)


def cacheable(vs: api.VirtualService) -> bool:
    """Hosts that delegate to RouteTables are rebuilt too: building them reports on the
    tables, which a replay would not repeat."""
    vhost = vs.spec.virtual_host
    delegates = vhost is not None and any(r.delegate_action for r in vhost.routes)
    return vs.spec.ssl_config is None and not delegates


def _same(old: tuple[Any, ...], new: tuple[Any, ...]) -> bool:
    *old_head, old_others = old
    *new_head, new_others = new
    if old_head != new_head or len(old_others) != len(new_others):
        return False
    return all(
        a_key == b_key and (a is b or a == b)
        for (a_key, a), (b_key, b) in zip(old_others, new_others, strict=True)
    )
