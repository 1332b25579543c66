"""`Build`: one stage-1 build, the context every pass reads and adds to; `BuildResult`: what
stage 1 hands to stage 2.

Contour's DAG builder is the model: a fresh context per translation, ordered passes
(`passes.PASSES`), each doing one job. A pass reads what the snapshot and earlier passes
hold and fills the fields that are its own; no pass resets another's field, so the order
in `PASSES` is the whole story. Findings go to `reports` with their field paths, every
reference through `refs` (which records the edge); a piece of building that should hand
its findings and edges back as values (one VirtualService: `virtualhosts.build_host`)
works on scopes of those two and returns them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from gw import api
from gw.api import Resource, ResourceKey
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway.contribution import Contribution, ListenerRole
from gw.translator.gateway.gateways import GatewayListener
from gw.translator.gateway.hostcache import HostCache
from gw.translator.gateway.install import declared_upstreams
from gw.translator.gateway.servers import Servers
from gw.translator.gateway.settings import RoutePolicy, control_plane_options, route_policy
from gw.translator.options import Options
from gw.translator.refs import Edge, Refs
from gw.translator.reports import Reports
from gw.translator.tally import Tallies

#: For each listener name: the virtual hosts that left it and those that joined it.
ListenerChanges = Mapping[str, tuple[Sequence[ir.VirtualHost], Sequence[ir.VirtualHost]]]

if TYPE_CHECKING:
    from gw.translator.gateway.stagecache import PendingStageCache, ServerUse, StageCache


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    #: One per proxy name, the default proxy (`Options.proxy_name`) first.
    proxies: tuple[ir.Proxy, ...]
    #: Each resource's contribution as last accepted (for the next translation).
    accepted: Mapping[ResourceKey, Contribution]
    #: Every reference resolved (referrer, field, referent), dangling ones included.
    references: Sequence[Edge]
    #: Every finding, by resource.
    reports: Reports
    #: What the next translation may reuse (`stagecache.py`); a full build's is made when
    #: first asked for.
    cache: StageCache | PendingStageCache
    #: Resources the install declared (`install.py`): translated, but not the user's.
    declared: frozenset[ResourceKey] = frozenset()
    #: The resources whose findings may differ from the previous build's (None: any):
    #: an incremental build (`incremental.py`) says which.
    dirty: frozenset[ResourceKey] | None = None
    #: With `dirty`: the proxies (by name) the dirty VirtualServices are served on, and
    #: the virtual hosts that left and joined each listener.
    landed: Mapping[ResourceKey, frozenset[str]] = field(default_factory=dict)
    changes: ListenerChanges | None = None


@dataclass(slots=True, kw_only=True)
class Build:
    """The inputs of one stage-1 build and, field by field, what its passes have made."""

    #: The resources read, with the ones the install declares (`install.py`).
    snapshot: Snapshot
    options: Options
    #: Each resource's last accepted contribution, served while it is rejected.
    previous: Mapping[ResourceKey, Contribution]
    #: The previous translation's memoised host builds (`hostcache.py`).
    cache: HostCache | None
    #: Resources whose current manifest does not parse.
    broken: frozenset[ResourceKey]
    #: The keys of the resources the install declared.
    declared: frozenset[ResourceKey]
    reports: Reports
    refs: Refs

    # What the passes make, in pass order (the pass that fills each is named).
    #: `read_settings`: the Settings that are read (the user's over the install's), and
    #: the key of the user's (None without).
    settings: api.Settings | None = None
    settings_key: ResourceKey | None = None
    #: `resolve_server_refs`: gw's own servers, as the Settings name them.
    servers: Servers = field(default_factory=Servers)
    #: `choose_gateways`: the listeners served.
    gateways: tuple[GatewayListener, ...] = ()
    #: The fresh contribution of every resource but the VirtualServices (Gateways,
    #: Upstreams, AuthConfigs, RateLimitConfigs).
    built: dict[ResourceKey, Contribution] = field(default_factory=dict)
    #: `build_virtual_services`: each VirtualService's, on the built-in listeners; placed
    #: on the gateways' by `place_virtual_hosts`.
    hosts: dict[ResourceKey, Contribution] = field(default_factory=dict)
    #: `build_virtual_services`: the hosts the next translation may reuse.
    host_cache: HostCache | None = None
    #: `check_server_users`: each VirtualService's check against gw's own servers.
    server_use: dict[ResourceKey, ServerUse] = field(default_factory=dict)
    #: `check_domain_conflicts`: the (listener role, domain) pairs several hosts claim.
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    #: `propagate`: the resources other than VirtualServices rejected in the end.
    closure: frozenset[ResourceKey] = frozenset()
    #: `choose`: each resource's contribution as served, fresh or last accepted, and
    #: which of them are the last accepted (few: kept apart from the fresh ones, which
    #: are nearly all, so an edit does not copy a set of every resource).
    accepted: dict[ResourceKey, Contribution] = field(default_factory=dict)
    stale: frozenset[ResourceKey] = frozenset()
    #: `assemble_proxy`: every cluster, secret and config served (one Proxy without
    #: listeners), and the virtual hosts by the listener role they are placed on.
    whole: ir.Proxy | None = None
    by_role: dict[ListenerRole, list[ir.VirtualHost]] = field(default_factory=dict)
    #: `split_proxies`: one Proxy per proxy name, the default one first.
    proxies: tuple[ir.Proxy, ...] = ()

    @classmethod
    def start(
        cls,
        snapshot: Snapshot,
        options: Options,
        previous: Mapping[ResourceKey, Contribution],
        cache: HostCache | None,
        known: Mapping[ResourceKey, Resource] | None = None,
    ) -> Build:
        """`known`: the resources of the last build, whose declared ones are reused when
        equal (so that they are the very same objects). Its tallies are drawn afresh;
        `incremental.update` moves the last build's on instead."""
        broken = frozenset(
            e.key for e in snapshot.errors if e.key is not None and e.key not in snapshot.resources
        )
        declared = declared_upstreams(options, _Taken(snapshot.resources, broken))
        if known is not None:
            declared = {k: _same(known.get(k), u) for k, u in declared.items()}
        if declared:  # the install's own Upstreams, read as if they were the user's
            snapshot = snapshot.with_resources(declared)
        return cls(
            snapshot=snapshot,
            options=options,
            previous=previous,
            cache=cache,
            broken=broken,
            declared=frozenset(declared),
            reports=Reports(),
            refs=Refs(
                snapshot.resources,
                set(broken),
                snapshot.keys_of_kind,
                Tallies(snapshot.resources, snapshot.keys_of_kind),
            ),
        )

    @property
    def require_rbac(self) -> bool:
        """Settings `rbac.requireRbac`: a host without policies denies all."""
        rbac = self.settings.spec.rbac if self.settings is not None else None
        return bool(rbac and rbac.require_rbac)

    @property
    def route_policy(self) -> RoutePolicy:
        """What the Settings say about routes (`invalidConfigPolicy`, direct destinations)."""
        return route_policy(self.settings)

    @property
    def translate_empty_gateways(self) -> bool:
        """Settings `gateway.translateEmptyGateways`: listen even with no virtual host."""
        gateway = self.settings.spec.gateway if self.settings is not None else None
        return bool(gateway and gateway.translate_empty_gateways)

    @property
    def grpc_web(self) -> bool:
        """gRPC-Web on gateways that do not say: Settings `gloo.disableGrpcWeb`, else off
        with `gloo.removeUnusedFilters` (the established rule), else on."""
        gloo = control_plane_options(self.settings)
        if gloo is None:
            return True
        if gloo.disable_grpc_web is not None:
            return not gloo.disable_grpc_web
        return not gloo.remove_unused_filters

    def result(self, cache: StageCache | PendingStageCache) -> BuildResult:
        return BuildResult(
            proxies=self.proxies,
            accepted=self.accepted,
            references=tuple(self.refs.edges),
            reports=self.reports,
            cache=cache,
            declared=self.declared,
        )


class _Taken:
    """The keys the user's resources hold, readable or not (without copying them)."""

    def __init__(self, resources: Mapping[ResourceKey, Resource], broken: frozenset[ResourceKey]):
        self._resources, self._broken = resources, broken

    def __contains__(self, key: object) -> bool:
        return key in self._resources or key in self._broken


R = TypeVar("R", bound=Resource)


def _same(known: Resource | None, made: R) -> R:
    """`known` when it equals `made` (the very object a cache recognises), else `made`."""
    return known if isinstance(known, type(made)) and known == made else made
