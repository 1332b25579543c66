"""`translate()`: a snapshot of resources in, each proxy's IR and xDS resources, what gw's own
servers are served, and a status per resource out.

A pure function: no I/O, no clock, no globals, no environment. Stage 1 (`gateway/`) builds
the Proxies and records findings (`reports.py`); stage 2 (`envoy/`) turns each Proxy into
xDS resources; the auth and rate-limit configs are encoded for their servers
(`envoy/extauth_server.py`, `envoy/ratelimit_server.py`). A rejected resource keeps serving
its last accepted contribution (`previous`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from gw.api import STATUSLESS_KINDS, ResourceKey
from gw.api.status import State, Status
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.envoy import Xds, XdsBuilder
from gw.translator.envoy.extauth_server import build_extauth_resources
from gw.translator.envoy.ratelimit_server import build_ratelimit_resources
from gw.translator.gateway.build import BuildResult
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.passes import build_proxy
from gw.translator.gateway.placement import PROXY_KIND
from gw.translator.gateway.stagecache import PendingStageCache, StageCache
from gw.translator.options import Options
from gw.translator.refs import Edge
from gw.translator.reports import Reports

FALLBACK_MESSAGE = "its last accepted configuration is still being served"


@dataclass(frozen=True, slots=True)
class TranslationCache:
    """What one translation can reuse from the previous one (stage 1: see
    `gateway/incremental.py`; stage 2: `envoy/routes.py`; the statuses). Passing it
    changes how fast `translate()` runs, never what it returns."""

    stage: StageCache | PendingStageCache | None = None
    xds: XdsBuilder | None = None
    statuses: Mapping[ResourceKey, Status] | None = None

    @property
    def pending(self) -> bool:
        """Whether the translation left its stage-1 cache to be made when asked for (a
        full build does; an incremental one hands it over made)."""
        return isinstance(self.stage, PendingStageCache)

    def prepare(self) -> StageCache | None:
        """The stage-1 cache, made now if the translation left it for later (a full
        build's is: the control plane publishes first, then calls this)."""
        stage = self.stage
        return stage.get() if isinstance(stage, PendingStageCache) else stage


@dataclass(frozen=True, slots=True)
class Result:
    #: One per proxy name, the default proxy (`Options.proxy_name`) first.
    proxies: tuple[ir.Proxy, ...]
    #: What each proxy's Envoys are served, by role (`<namespace>~<name>`).
    served: Mapping[str, Xds]
    reports: Reports
    statuses: Mapping[ResourceKey, Status]
    #: Each resource's contribution as last accepted: pass it to the next `translate()`.
    accepted: Mapping[ResourceKey, Contribution] = field(default_factory=dict)
    #: Every reference resolved (referrer, field, referent), dangling ones included.
    references: Sequence[Edge] = ()
    #: Pass to the next `translate()` to skip rebuilding what did not change.
    cache: TranslationCache = field(default_factory=TranslationCache)
    #: What the extauth servers are served (role `proxy.extauth_role`): the AuthConfigs.
    extauth: Xds = field(default_factory=lambda: Xds({}))
    #: What the rate-limit servers are served (role `proxy.ratelimit_role`).
    ratelimit: Xds = field(default_factory=lambda: Xds({}))
    #: The status of each Proxy (kept apart: Proxies are outputs, the store never sees them).
    proxy_statuses: Mapping[str, Status] = field(default_factory=dict)
    #: Resources the install declared and translated like the user's (`gw up`'s own
    #: servers' Upstreams); they have no status.
    declared: frozenset[ResourceKey] = frozenset()
    #: The resources whose status may differ from the previous translation's (None: any):
    #: an incremental translation redid only those.
    restated: frozenset[ResourceKey] | None = None

    @property
    def proxy(self) -> ir.Proxy:
        """The default proxy (`gateway-proxy`), which always exists."""
        return self.proxies[0]

    @property
    def xds(self) -> Xds:
        """What the default proxy is served."""
        return self.served[self.proxy.role]


def translate(
    snapshot: Snapshot,
    options: Options = Options(),
    previous: Mapping[ResourceKey, Contribution] | None = None,
    *,
    cache: TranslationCache | None = None,
) -> Result:
    cache = cache or TranslationCache()
    built = build_proxy(
        snapshot, options, previous if previous is not None else {}, cache.prepare()
    )
    proxies, reports = built.proxies, built.reports
    builder = XdsBuilder(cache.xds, options.shard_routes_from)
    served = {proxy.role: builder.build(proxy, built.changes) for proxy in proxies}
    restated = built.dirty if cache.statuses is not None else None
    if restated is None or cache.statuses is None:
        statuses = _statuses(snapshot, reports, built.accepted, _landed(proxies))
    else:
        statuses = _statuses_again(cache.statuses, snapshot, built, proxies)
    return Result(
        proxies=proxies,
        served=served,
        reports=reports,
        statuses=statuses,
        accepted=built.accepted,
        references=built.references,
        cache=TranslationCache(stage=built.cache, xds=builder, statuses=statuses),
        extauth=Xds(build_extauth_resources(proxies[0])),
        ratelimit=Xds(build_ratelimit_resources(proxies[0])),
        proxy_statuses={
            p.name: reports.status(ResourceKey(PROXY_KIND, p.namespace, p.name)) for p in proxies
        },
        declared=built.declared,
        restated=restated,
    )


def proxy_subresource(proxy: ir.Proxy) -> str:
    """How a resource's status names a Proxy it contributed to (REFERENCE.md §2.1)."""
    return f"*v1.Proxy.{proxy.name}_{proxy.namespace}"


def _landed(proxies: tuple[ir.Proxy, ...], hosts: bool = True) -> dict[ResourceKey, list[str]]:
    """For each resource that put a listener or a virtual host on a proxy: those proxies
    (without `hosts`: only the gateways that put listeners)."""
    out: dict[ResourceKey, list[str]] = {}
    for proxy in proxies:
        name = proxy_subresource(proxy)
        for listener in proxy.listeners:
            sources = [v.source for v in listener.virtual_hosts] if hosts else []
            for part in listener.matched:
                if hosts and part.http is not None:
                    sources += [v.source for v in part.http.virtual_hosts]
                sources += [part.source] if part.source is not None else []
            if listener.gateway is not None:
                sources.append(listener.gateway)
            for source in sources:
                found = out.setdefault(ResourceKey(source.kind, source.namespace, source.name), [])
                if name not in found:
                    found.append(name)
    return out


def _statuses(
    snapshot: Snapshot,
    reports: Reports,
    accepted: Mapping[ResourceKey, Contribution],
    landed: Mapping[ResourceKey, list[str]],
) -> dict[ResourceKey, Status]:
    """A status for every gw resource (the orchestrator's own objects, secrets included,
    have none). `subresourceStatuses` names the proxies the resource landed on."""
    keys = snapshot.sorted_keys(e.key for e in snapshot.errors if e.key is not None)
    return {
        key: _status(key, reports, accepted, landed.get(key, ()))
        for key in keys
        if key.kind not in STATUSLESS_KINDS
    }


def _status(
    key: ResourceKey,
    reports: Reports,
    accepted: Mapping[ResourceKey, Contribution],
    landed: Iterable[str],
) -> Status:
    status = reports.status(key, subresources=landed)
    if status.state is State.REJECTED and key in accepted:
        status = status.model_copy(update={"messages": [FALLBACK_MESSAGE]})
    return status


def _statuses_again(
    before: Mapping[ResourceKey, Status],
    snapshot: Snapshot,
    built: BuildResult,
    proxies: tuple[ir.Proxy, ...],
) -> dict[ResourceKey, Status]:
    """The last statuses, those of the resources an incremental build redid made again
    (`built.dirty`; the proxies a redone VirtualService landed on are `built.landed`)."""
    assert built.dirty is not None
    landed = _landed(proxies, hosts=False)
    names = {p.name: proxy_subresource(p) for p in proxies}
    for key, on in built.landed.items():
        landed[key] = [names[p] for p in names if p in on]
    errors = {e.key for e in snapshot.errors if e.key is not None}
    out = dict(before)
    for key in built.dirty:
        if key.kind in STATUSLESS_KINDS or (key not in snapshot.resources and key not in errors):
            out.pop(key, None)
        else:
            out[key] = _status(key, built.reports, built.accepted, landed.get(key, ()))
    return out
