"""Stage 1 after an edit: only what depends on the changed resources is redone.

`update()` is the fast path of `passes.build_proxy` when the previous translation's
`StageCache` is at hand. It gives exactly what running every pass gives (the property test
`tests/unit/translator/test_incremental.py` checks it over random edits of every golden
input); when it cannot tell, it says so (None) and every pass runs.

1. The global passes (`passes.GLOBAL_PASSES`: Settings, gw's servers, Gateways, Upstreams,
   AuthConfigs, shared options) run as usual: they are about the resources that are not
   VirtualServices, which are few. If what every VirtualService's passes read from them
   (the options, the servers, the listeners: the `fingerprint`) changed, or the build is
   not one `update` can repeat (another pass, another contribution field, several
   proxies), it stops there.
2. The VirtualServices to redo: the changed ones; those whose memoised build read a
   changed resource, listing, state, unreadable manifest or clock answer (the read index
   of `hostcache.py`) and would read it otherwise now (`still_valid`); those whose input
   errors or last accepted contribution changed; those that refer to a resource whose
   rejection changed; and, to close it, every VirtualService sharing a domain or SNI
   claim with one of them on a listener (`stagecache.Claims`): only those can clash with
   each other.
3. The host passes (`passes.HOST_PASSES`) run for those alone, through the functions the
   full build calls, and what they make takes the place of the last build's: the claims'
   conflicts, the rejections through references (resources other than VirtualServices
   are redone whole, with the findings and references every VirtualService's build
   recorded on them), the contributions chosen, each listener's virtual hosts in served
   order (`stagecache.Listing`), the clusters and secrets.

Nothing here knows a feature: it knows resources, references, claims and contributions. A
new option of a virtual host or route is built by `build_host` and covered by its reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from gw import api, defaults
from gw.api import ResourceKey
from gw.api.status import State
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.clock import same_answers
from gw.translator.gateway import passes, placement, tls, virtualhosts
from gw.translator.gateway.build import Build, BuildResult
from gw.translator.gateway.contribution import Contribution
from gw.translator.gateway.extauth_pass import pass_ttl_s
from gw.translator.gateway.fallback import DOMAIN_CLAIM, choose_contributions
from gw.translator.gateway.gateways import GatewayListener
from gw.translator.gateway.hostcache import HostCache, Listings, Memo, build_memo, still_valid
from gw.translator.gateway.orch import add_service_clusters
from gw.translator.gateway.proxies import build_proxies
from gw.translator.gateway.stagecache import (
    Foreign,
    ServerUse,
    Shared,
    StageCache,
    claims_of_key,
)
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.options import Options
from gw.translator.refs import (
    Edge,
    first_rejected_references,
    rejected_closure,
    rejection_message,
)
from gw.translator.reports import Findings, Reports

VS = api.VirtualService.KIND
RT = api.RouteTable.KIND
#: The contribution fields the listing and `assemble` handle (another one: full build).
KNOWN_FIELDS = frozenset(
    {"virtual_hosts", "clusters", "secrets", "auth_configs", "rate_limit_configs", "gateways"}
)


def update(
    cache: StageCache,
    snapshot: Snapshot,
    options: Options,
    previous: Mapping[ResourceKey, Contribution],
) -> BuildResult | None:
    """Stage 1 for `snapshot`, redoing only what changed since `cache` (see the module);
    None when the full build must run."""
    if not cache.current() or previous is not cache.accepted or not repeatable():
        return None
    build = Build.start(snapshot, options, previous, cache.hosts, known=cache.resources)
    changed = _changed(cache, snapshot, build)
    if changed is None:
        return None
    if cache.tallies is not None:  # what the global passes draw from every VirtualService
        listing = build.snapshot.keys_of_kind
        build.refs.tallies = cache.tallies.moved(build.snapshot.resources, listing, changed)
    for run in passes.GLOBAL_PASSES:
        run(build)
    if fingerprint(build) != cache.fingerprint or not cache.fingerprint[-1]:
        return None
    return _Update(cache, build, snapshot, changed).run()


def repeatable() -> bool:
    """Whether `update` repeats the passes as they are: a new host pass or contribution
    field makes every translation a full one until `update` learns it."""
    fields = {f.name for f in dataclasses.fields(Contribution)}
    return passes.HOST_PASSES == REPEATS and fields <= KNOWN_FIELDS


def fingerprint(build: Build) -> tuple[Any, ...]:
    """What every VirtualService's passes read besides itself and its recorded reads; its
    last item False when the build is not repeated incrementally: several proxies, or a TCP
    or hybrid gateway (their parts are placed and built whole: a full build is safe)."""
    options = dataclasses.replace(build.options, now=None)
    proxies = {p for g in build.gateways for p in g.proxies} - {options.proxy_name}
    rules = (build.require_rbac, build.route_policy)
    plain = not proxies and all(g.kind == "http" for g in build.gateways)
    plain = plain and not _http_checks_upstream_rejected(build)
    # Session passes are keyed by each AuthConfig's version and attached to every host
    # when contributions are assembled: the full build does that.
    plain = plain and pass_ttl_s(build.settings.spec.extauth if build.settings else None) is None
    return (options, rules, build.servers, placing(build.gateways), plain)


def placing(gateways: Iterable[GatewayListener]) -> tuple[GatewayListener, ...]:
    """The gateways as the host passes read them: where they listen, for which proxies,
    which hosts they select. Not how their listeners speak HTTP, accept connections, which
    filters their own options add or their route configurations' options (`http`,
    `options`, `plugins`, `route_options`): `build_proxies` and `assembled` read those of
    the gateways of the build on every build, so a Gateway's `serverName` or access log
    changed is an incremental build that redoes no host."""
    return tuple(
        dataclasses.replace(g, http=_HTTP, options=_OPTIONS, plugins=_PLUGINS, route_options=None)
        for g in gateways
    )


_HTTP, _OPTIONS, _PLUGINS = ir.HttpSettings(), ir.ListenerOptions(), ir.HttpListenerOptions()


def _http_checks_upstream_rejected(build: Build) -> bool:
    """The Upstream of the extauth server's HTTP checks is rejected now: whether its cluster
    is still served (a last accepted version) and so whether hosts check over HTTP is only
    known once contributions are chosen (`proxies.without_missing_cluster`), which the full
    build decides for every host."""
    for resolved in build.servers.resolved:
        checks = getattr(resolved.server, "http_checks", None)
        if checks is None:
            continue
        for server in resolved.upstreams:  # the server's Upstream; its checks' is named after it
            if server.kind != api.Upstream.KIND:
                continue
            name = server.name + defaults.EXTAUTH_HTTP_SUFFIX
            key = ResourceKey(server.kind, server.namespace, name)
            if cluster_name(key.name, key.namespace) != checks.cluster:
                continue
            if key in build.broken or build.reports.rejected(key):
                return True
    return False


def _changed(cache: StageCache, given: Snapshot, build: Build) -> frozenset[ResourceKey] | None:
    """The keys whose resource is not the very one the cache's build read."""
    old, new = cache.resources, build.snapshot.resources
    since = given.lineage.changed_since(cache.token)
    if since is None:
        if len(new) > 4 * len(old) + 64:
            return None  # another folder altogether: as cheap to build it all
        keys: Iterable[ResourceKey] = old.keys() | new.keys()
    else:
        keys = since | build.declared | cache.declared
    return frozenset(k for k in keys if old.get(k) is not new.get(k))


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """What a full build is at after its global passes (for the cache it leaves)."""

    states: Mapping[ResourceKey, State]
    edges: int
    fingerprint: tuple[Any, ...]

    @classmethod
    def of(cls, build: Build) -> Checkpoint:
        return cls(_global_states(build.reports), len(build.refs.edges), fingerprint(build))


class _Update:
    """One incremental build (see the module): `run()` gives its result."""

    def __init__(
        self, cache: StageCache, build: Build, given: Snapshot, changed: frozenset[ResourceKey]
    ) -> None:
        self.cache, self.build, self.given, self.changed = cache, build, given, changed
        self.shared = cache.shared
        self.checkpoint = Checkpoint.of(build)
        self.states = self._state_changes()
        self.memos: dict[ResourceKey, Memo] = dict(cache.hosts.memos)
        self.rebuilt: set[ResourceKey] = set()
        self.placed: dict[ResourceKey, Contribution] = dict(cache.placed)
        self.server_use: dict[ResourceKey, ServerUse] = dict(cache.server_use)
        #: The foreign hosts' findings and references on other resources (`_foreign_parts`).
        self.foreign: Foreign = cache.foreign
        #: Per listener role: the virtual hosts that left it and that joined it.
        self.moved: dict[str, tuple[list[ir.VirtualHost], list[ir.VirtualHost]]] = {}
        # RouteTables contribute nothing and their findings are in the reports (which the
        # result compares): only the changed ones are redone as such.
        kinds = [k for k in build.snapshot.kinds() if k not in (VS, RT)]
        self.others = {key for kind in kinds for key in build.snapshot.keys_of_kind(kind)}
        self.others |= {k for k in build.broken if k.kind != VS}
        self.others |= {k for k in changed if k.kind == RT}

    def run(self) -> BuildResult:
        build = self.build
        redo = self._rebuild_hosts() | self._input_error_changes()
        redo = {k for k in redo if k.kind == VS}
        foreign = self._foreign(redo)
        closure = self._closure(foreign, redo)
        for key in closure ^ self.cache.closure:
            redo |= self.shared.referrers.get(key, set())
        dirty = self._claims(redo)
        self.foreign = self._foreign_parts(foreign, dirty)
        self._merge_hosts(dirty, foreign)
        present = [k for k in sorted(dirty) if k in self.memos]
        conflicts = self._conflicts(present)
        self._server_use(dirty, present)
        self._propagate(present, foreign, closure)
        passes.choose_gateways(build)
        touched = self._choose(dirty)
        extras = self._assemble(touched)
        listing = self.shared.listing
        placement.warn_empty_gateways(build.gateways, listing.vhosts, build.reports)
        assert build.whole is not None
        build.proxies = build_proxies(build.whole, listing.vhosts, build.gateways, ordered=True)
        return self._result(dirty, touched, closure, conflicts, extras, foreign)

    # -- which VirtualServices to redo ----------------------------------------------------

    def _rebuild_hosts(self) -> set[ResourceKey]:
        """The VirtualServices that changed, and those whose memoised build read something
        that did and would now read it otherwise: each rebuilt (or dropped). A memo still
        valid is not redone: its build, and all that follows from it, is the same (an
        Upstream's new port leaves the hosts that route to it as they were)."""
        cache, build, changed = self.cache, self.build, self.changed
        index = cache.hosts.readers()
        candidates = {k for k in changed if k.kind == VS}
        states = self.states
        for key in changed | states:
            candidates |= index.resources.get(key, set())
        for kind in {k.kind for k in changed}:
            candidates |= index.kinds.get(kind, set())
        same_errors = build.snapshot.errors == cache.errors
        if not same_errors:
            candidates |= index.broken
        now = build.options.now
        candidates |= {k for k in index.clock if not same_answers(list(self.memos[k].clock), now)}
        listings, before = Listings(build.snapshot), build.reports.scope()
        for key in candidates:
            vs = build.snapshot.resources.get(key)
            memo = self.memos.get(key)
            if not isinstance(vs, api.VirtualService):
                if self.memos.pop(key, None) is not None:
                    self.rebuilt.add(key)
            elif memo is None or not still_valid(
                memo, vs, build.snapshot, listings, before, same_errors, now
            ):
                again = build_memo(
                    vs,
                    build.snapshot,
                    build.options,
                    build.refs,
                    before,
                    build.require_rbac,
                    build.route_policy,
                )
                if memo is not None and memo.built.vs is vs and again.built == memo.built:
                    # Built the same from the same resource (an Upstream it routes to got
                    # a new port, say): the old objects stay, so what is placed, listed and
                    # sent for it does too. (From an equal but new resource they would
                    # not: the memo must hold the resource it is valid for.)
                    again = Memo(memo.built, again.reads, again.clock)
                self.memos[key] = again
                self.rebuilt.add(key)
        return set(self.rebuilt)

    def _state_changes(self) -> set[ResourceKey]:
        """Resources (not VirtualServices) whose state after the global passes changed."""
        old, new = self.cache.states, self.checkpoint.states
        return {k for k in old.keys() | new.keys() if old.get(k) is not new.get(k)}

    def _input_error_changes(self) -> set[ResourceKey]:
        old, new = self.cache.errors, self.build.snapshot.errors
        if old == new:
            return set()
        return {e.key for e in set(old) ^ set(new) if e.key is not None}

    def _foreign(self, redo: set[ResourceKey]) -> frozenset[ResourceKey]:
        """VirtualServices whose build has findings or references on other resources."""
        out = set(self.cache.foreign.keys - redo)
        out |= {k for k in redo if k in self.memos and _has_foreign(self.memos[k])}
        return frozenset(out)

    def _closure(
        self, foreign: frozenset[ResourceKey], redo: set[ResourceKey]
    ) -> frozenset[ResourceKey]:
        """The resources other than VirtualServices rejected in the end: the last build's
        while what they follow from is the same (an edit of a VirtualService that refers
        to nothing else leaves it), else found again over every reference."""
        if self._same_references(foreign, redo):
            return self.cache.closure
        reports = self.build.reports.scope()
        again = foreign_of(foreign, self.memos)
        reports.add(again.findings)
        edges = [*self.build.refs.edges, *again.edges]
        return outside_closure(edges, reports, [*self.build.reports.keys(), *reports.keys()])

    def _same_references(self, foreign: frozenset[ResourceKey], redo: set[ResourceKey]) -> bool:
        """Whether the closure's inputs are the last build's: the global passes' references
        and states, the input errors, and the references and findings on other resources
        of the VirtualServices that have some (none of them redone, none new)."""
        cache = self.cache
        return (
            foreign == cache.foreign.keys
            and not redo & foreign
            and self.build.snapshot.errors == cache.errors
            and not self.states
            and tuple(self.build.refs.edges[: self.checkpoint.edges]) == cache.edges
        )

    def _claims(self, redo: set[ResourceKey]) -> set[ResourceKey]:
        """`redo` placed on their listeners, closed over shared claims (old and new)."""
        claims = self.shared.claims
        linked = claims.neighbours(redo)
        last = self.cache.hosts.memos
        for key in sorted(redo):
            memo = self.memos.get(key)
            placed = None
            if memo is not None and memo.built.contribution is not None:
                was = last.get(key)
                if was is not None and was.built is memo.built and key in self.cache.placed:
                    placed = self.cache.placed[key]  # the same build: placed as it was
                else:
                    placed = self._place(key, memo.built.contribution)
            if placed is None:
                self.placed.pop(key, None)
            else:
                self.placed[key] = placed
            claims.hold(key, claims_of_key(placed, self.build.previous.get(key)))
        return claims.neighbours(linked | redo)

    def _place(self, key: ResourceKey, contribution: Contribution) -> Contribution:
        """`place_virtual_hosts` and `add_direct_service_clusters` for one host."""
        build = self.build
        placed = placement.place_virtual_hosts(
            {key: contribution}, build.gateways, build.snapshot, build.options
        )
        add_service_clusters(placed)
        return placed[key]

    # -- the host passes for the dirty ones -----------------------------------------------

    def _foreign_parts(self, foreign: frozenset[ResourceKey], dirty: set[ResourceKey]) -> Foreign:
        """The findings and references of `foreign` on other resources: the last build's
        while they are the same hosts, none of them dirty (5,000 delegating hosts' gathered
        again on every edit took 12 ms at 100,000)."""
        kept = self.cache.foreign
        if foreign == kept.keys and not dirty & foreign:
            return kept
        return foreign_of(foreign, self.memos)

    def _merge_hosts(self, dirty: set[ResourceKey], foreign: frozenset[ResourceKey]) -> None:
        """`build_virtual_services`' findings: the dirty hosts' own, and every host's on
        other resources, in host order as the full build merges them. When no dirty host
        is foreign nor has a foreign host's finding, the orders cannot differ on any one
        resource, and the foreign findings go in at once."""
        reports = self.build.reports
        if not dirty & foreign and not dirty & self.foreign.targets:
            reports.add(self.foreign.findings)
            foreign = frozenset()
        for key in sorted(dirty | foreign):
            memo = self.memos.get(key)
            if memo is None:
                continue
            if key in dirty:
                reports.of(key)
                reports.add(memo.built.findings)
            else:
                reports.add(_foreign_only(key, memo.built.findings))

    def _conflicts(self, present: list[ResourceKey]) -> list[tuple[str, str]]:
        """`check_domain_conflicts` and `check_sni_conflicts` over the dirty hosts (which
        hold every claim they share with others): the listeners' conflicts are the
        others' as before and these."""
        build, dirty = self.build, set(present)
        hosts = {k: self.placed[k] for k in present if k in self.placed}
        found = virtualhosts.check_domain_conflicts(hosts, build.reports)
        by_claim = self.shared.claims.by_claim
        kept = [
            c
            for c in self.cache.conflicts
            if (held := by_claim.get((c[0], DOMAIN_CLAIM, c[1]))) and dirty.isdisjoint(held)
        ]
        conflicts = sorted({*kept, *found})
        placement.warn_domain_conflicts(conflicts, build.gateways, build.reports)
        tls.check_sni_conflicts(hosts, build.reports)
        return conflicts

    def _server_use(self, dirty: set[ResourceKey], present: list[ResourceKey]) -> None:
        """`check_server_users` for the dirty hosts (the same check while the host is)."""
        build = self.build
        for key in dirty:
            if key not in self.memos:
                self.server_use.pop(key, None)
        for key in present:
            vs = build.snapshot.resources[key]
            assert isinstance(vs, api.VirtualService)
            use = self.server_use.get(key)
            if use is None or self.cache.resources.get(key) is not vs:
                use = self.server_use[key] = passes.server_use_of(build, vs)
            build.reports.add(use.findings)

    def _propagate(
        self,
        present: list[ResourceKey],
        foreign: frozenset[ResourceKey],
        closure: frozenset[ResourceKey],
    ) -> None:
        """`propagate` for the resources other than VirtualServices (whole) and the dirty
        VirtualServices (no reference names a VirtualService: checked by `_closure`)."""
        reports, rejected = self.build.reports, set(closure)
        edges = [*self.build.refs.edges, *self.foreign.edges]
        outside = (e for e in edges if e.referrer.kind != VS)
        found = first_rejected_references(outside, rejected, reports.rejected)
        for key in present:
            own = (*self.memos[key].built.edges, *self.server_use[key].edges)
            mine = (e for e in own if e.referrer == key)
            found += first_rejected_references(mine, rejected, reports.rejected)
        for referrer, edge in found:
            reports.of(referrer).error(edge.field, rejection_message(edge.referent, reports))

    def _choose(self, dirty: set[ResourceKey]) -> set[ResourceKey]:
        """`choose` for the dirty VirtualServices and every other resource; the keys whose
        choice was made again."""
        build, cache = self.build, self.cache
        present = build.snapshot.resources
        keys = self.others | {k for k in dirty if k in present or k in build.broken}
        made = {**build.built, **{k: self.placed[k] for k in dirty if k in self.placed}}
        chosen = choose_contributions(sorted(keys), made, build.previous, build.reports)
        touched = keys | dirty | {k for k in cache.others if k in cache.accepted}
        accepted = dict(cache.accepted)
        for key in touched:
            accepted.pop(key, None)
        accepted.update(chosen)
        stale = {k for k, c in chosen.items() if made.get(k) is not c}
        build.accepted = accepted
        build.stale = frozenset((cache.stale - touched) | stale)
        return touched

    def _assemble(self, touched: set[ResourceKey]) -> frozenset[ResourceKey]:
        """`assemble_proxy`: the listing redone for the choices made again; clusters,
        secrets and configs from every contribution that has any. The VirtualServices
        whose contribution has some besides virtual hosts."""
        build, cache, listing = self.build, self.cache, self.shared.listing
        accepted, stale = build.accepted, build.stale
        fits = placement.servable(build.gateways)
        for key in sorted(touched):
            contribution = accepted.get(key)
            for role, vhost, joined in listing.place(
                key, _entries(key, contribution, key in stale, build, fits)
            ):
                self.moved.setdefault(role, ([], []))[joined].append(vhost)
        extras = {k for k in cache.extras - touched if k in accepted}
        extras |= {k for k in touched if k.kind == VS and _extra(accepted.get(k))}
        holders = {k: accepted[k] for k in self.others | extras if k in accepted}
        build.whole, _ = passes.assembled(build, holders, hosts=False)
        return frozenset(extras)

    # -- the result ----------------------------------------------------------------------

    def _result(
        self,
        dirty: set[ResourceKey],
        touched: set[ResourceKey],
        closure: frozenset[ResourceKey],
        conflicts: list[tuple[str, str]],
        extras: frozenset[ResourceKey],
        foreign: frozenset[ResourceKey],
    ) -> BuildResult:
        build, cache = self.build, self.cache
        relanded = self._relanded()  # restated (where they land), not redone
        for key in dirty:
            memo, use = self.memos.get(key), self.server_use.get(key)
            own = (*memo.built.edges, *use.edges) if memo is not None and use is not None else ()
            self.shared.refer(key, own)
        hosts = HostCache(cache.hosts.context, self.memos, build.snapshot.errors, self._index())
        hosts.index.owner = hosts
        others = frozenset(
            {k for k in build.reports.keys() if k.kind != VS}
            | {k for k in self.others if k in build.accepted}
        )
        reports = cache.reports.replaced(build.reports, dirty | others | cache.others)
        edges = tuple(build.refs.edges[: self.checkpoint.edges])
        previous = build.previous
        new = StageCache(
            hosts=hosts,
            token=self.given.lineage.token,
            resources=build.snapshot.resources,
            errors=build.snapshot.errors,
            fingerprint=cache.fingerprint,
            states=self.checkpoint.states,
            closure=closure,
            placed=self.placed,
            server_use=self.server_use,
            conflicts=tuple(conflicts),
            accepted=build.accepted,
            changed=frozenset(k for k in touched if build.accepted.get(k) is not previous.get(k)),
            stale=build.stale,
            extras=extras,
            foreign=self.foreign,
            others=others,
            declared=build.declared,
            reports=reports,
            edges=edges,
            shared=self.shared,
            tallies=build.refs.tallies,
            gateways=placing(build.gateways),
        )
        self.shared.owner = new
        return BuildResult(
            proxies=build.proxies,
            accepted=build.accepted,
            references=References(edges, self.memos, self.server_use),
            reports=reports,
            cache=new,
            declared=build.declared,
            dirty=self._restated(dirty | relanded | touched | others | cache.others, reports),
            landed=self._landed(dirty | relanded),
            changes={g.name: self.moved[g.role] for g in build.gateways if g.role in self.moved},
        )

    def _restated(self, redone: set[ResourceKey], reports: Reports) -> frozenset[ResourceKey]:
        """The resources whose status may differ from the last build's, of those `redone`:
        all but the unchanged resources (not VirtualServices) that contribute nothing, so
        land on no proxy and have no last accepted version, and whose findings are the
        same as before (most RouteTables on an edit of a VirtualService: their statuses
        were made and compared again, 5,000 at 100,000 VirtualServices)."""
        before, now = self.cache.reports, reports
        accepted, was_accepted = self.build.accepted, self.cache.accepted
        return frozenset(
            k
            for k in redone
            if k.kind == VS
            or k in self.changed
            or k in accepted
            or k in was_accepted
            or not before.same(now, k)
        )

    def _relanded(self) -> set[ResourceKey]:
        """The VirtualServices on a listener served otherwise than by the last build: where
        they land may differ, though their placement does not (a Gateway rejected through
        a reference, or accepted again, loses or gets its listener after the host passes,
        which the fingerprint of the global passes does not see)."""
        before: dict[str, list[GatewayListener]] = {}
        now: dict[str, list[GatewayListener]] = {}
        pairs = ((self.cache.gateways, before), (placing(self.build.gateways), now))
        for gateways, by_role in pairs:
            for g in gateways:
                by_role.setdefault(g.role, []).append(g)
        roles = [r for r in before.keys() | now.keys() if before.get(r) != now.get(r)]
        vhosts = self.shared.listing.vhosts
        return {
            ResourceKey(v.source.kind, v.source.namespace, v.source.name)
            for role in roles
            for v in vhosts.get(role, ())
            if v.source is not None
        }

    def _landed(self, dirty: set[ResourceKey]) -> dict[ResourceKey, frozenset[str]]:
        """The proxies each dirty VirtualService's virtual hosts are served on."""
        gateways, of_key = self.build.gateways, self.shared.listing.of_key
        out = {}
        for key in dirty:
            roles = {role for role, _ in of_key.get(key, ())}
            out[key] = frozenset(p for g in gateways if g.role in roles for p in g.proxies)
        return out

    def _index(self) -> Any:
        """The shared read index, moved on to the new memos."""
        old = self.cache.hosts
        index = old.readers()
        for key in self.rebuilt:
            before, after = old.memos.get(key), self.memos.get(key)
            if before is not None:
                index.remove(key, before)
            if after is not None:
                index.add(key, after)
        return index


#: The host passes `update` repeats (`repeatable`).
REPEATS = (
    passes.build_virtual_services,
    passes.place_virtual_hosts,
    passes.check_domain_conflicts,
    passes.check_sni_conflicts,
    passes.check_server_users,
    passes.add_direct_service_clusters,
    passes.propagate,
    passes.choose_gateways,
    passes.choose,
    passes.assemble_proxy,
    passes.warn_empty_gateways,
    passes.split_proxies,
)


def outside_closure(
    edges: Sequence[Edge],
    reports: Reports,
    keys: Iterable[ResourceKey],
    closure: Set[ResourceKey] | None = None,
) -> frozenset[ResourceKey]:
    """The resources other than VirtualServices rejected once rejections follow the
    references, of those in `edges` or `keys` (what both kinds of build compare).
    `closure`: the rejected closure of `edges` when the caller has it (the same before and
    after the rejections are propagated: propagating rejects exactly that closure)."""
    closure = set(rejected_closure(edges, reports) if closure is None else closure)
    closure |= reports.rejected_among(k for k in keys if k.kind != VS)
    return frozenset(k for k in closure if k.kind != VS)


def cache_of(build: Build, given: Snapshot, checkpoint: Checkpoint) -> StageCache:
    """What a full build leaves for the next translation."""
    shared = Shared()
    memos = build.host_cache.memos if build.host_cache is not None else {}
    for key, placed in build.hosts.items():
        shared.claims.hold(key, claims_of_key(placed, build.previous.get(key)))
    for key, previous in build.previous.items():
        if key.kind == VS and key not in build.hosts:
            shared.claims.hold(key, claims_of_key(None, previous))
    served: dict[ResourceKey, list[tuple[str, tuple[str, bool, ResourceKey], ir.VirtualHost]]] = {}
    for role, vhosts in build.by_role.items():  # as served: with gw's servers attached
        for vhost in vhosts:
            key = ResourceKey(vhost.source.kind, vhost.source.namespace, vhost.source.name)
            entry = (role, (vhost.name, key in build.stale, key), vhost)
            served.setdefault(key, []).append(entry)
    for key, entries in served.items():
        shared.listing.place(key, tuple(entries))
    for key, memo in memos.items():
        shared.refer(key, (*memo.built.edges, *build.server_use[key].edges))
    others = frozenset(k for k in (*build.reports.keys(), *build.accepted) if k.kind != VS)
    reports = build.reports
    cache = StageCache(
        hosts=build.host_cache or HostCache((), {}),
        token=given.lineage.token,
        resources=build.snapshot.resources,
        errors=build.snapshot.errors,
        fingerprint=checkpoint.fingerprint,
        states=checkpoint.states,
        closure=build.closure,
        placed=build.hosts,
        server_use=build.server_use,
        conflicts=tuple(build.conflicts),
        accepted=build.accepted,
        changed=frozenset(
            k
            for k in build.accepted.keys() | build.previous.keys()
            if build.accepted.get(k) is not build.previous.get(k)
        ),
        stale=build.stale,
        extras=frozenset(k for k, c in build.accepted.items() if k.kind == VS and _extra(c)),
        foreign=foreign_of(frozenset(k for k, m in memos.items() if _has_foreign(m)), memos),
        others=others,
        declared=build.declared,
        reports=reports,
        edges=tuple(build.refs.edges[: checkpoint.edges]),
        shared=shared,
        tallies=build.refs.tallies,
        gateways=placing(build.gateways),
    )
    shared.owner = cache
    if checkpoint.fingerprint[-1]:
        # Who read what, made now rather than by the first edit after a full build, which
        # took that much longer (100 ms at 100,000 VirtualServices, 1% of the full build).
        cache.hosts.readers()
    return cache


def foreign_of(keys: frozenset[ResourceKey], memos: Mapping[ResourceKey, Memo]) -> Foreign:
    """The findings and references of the hosts `keys` on other resources, in host order."""
    findings: list[Any] = []
    edges: list[Edge] = []
    for key in sorted(keys):
        memo = memos.get(key)
        if memo is not None:
            findings += _foreign_only(key, memo.built.findings)
            edges += [e for e in memo.built.edges if e.referrer != key]
    return Foreign(keys, tuple(findings), tuple(edges), frozenset(f[0] for f in findings))


def _has_foreign(memo: Memo) -> bool:
    key = memo.built.vs.key
    return any(f[0] != key for f in memo.built.findings) or any(
        e.referrer != key for e in memo.built.edges
    )


def _foreign_only(key: ResourceKey, findings: Findings) -> Findings:
    return tuple(f for f in findings if f[0] != key)


def _extra(contribution: Contribution | None) -> bool:
    """Whether a contribution holds more than virtual hosts (for `assemble`)."""
    return contribution is not None and bool(
        contribution.clusters
        or contribution.secrets
        or contribution.auth_configs
        or contribution.rate_limit_configs
    )


def _entries(
    key: ResourceKey,
    contribution: Contribution | None,
    stale: bool,
    build: Build,
    fits: Callable[[str, ir.VirtualHost], bool],
) -> tuple[tuple[str, tuple[str, bool, ResourceKey], ir.VirtualHost], ...]:
    """What `assemble` lists of one contribution (`fits`: `placement.servable`)."""
    if contribution is None:
        return ()
    return tuple(
        (role, (vhost.name, stale, key), build.servers.attach(vhost))
        for role, vhost in contribution.virtual_hosts
        if fits(role, vhost)
    )


def _global_states(reports: Reports) -> dict[ResourceKey, State]:
    return {k: r.state for k, r in reports.items() if k.kind != VS}


class References(Sequence[Edge]):
    """Every reference of a build, in the full build's order, put together on first use."""

    def __init__(
        self,
        edges: tuple[Edge, ...],
        memos: Mapping[ResourceKey, Memo],
        server_use: Mapping[ResourceKey, ServerUse],
    ) -> None:
        self._parts = (edges, memos, server_use)
        self._all: tuple[Edge, ...] | None = None

    def _edges(self) -> tuple[Edge, ...]:
        if self._all is None:
            edges, memos, server_use = self._parts
            keys = sorted(memos)
            self._all = (
                *edges,
                *(e for k in keys for e in memos[k].built.edges),
                *(e for k in keys if k in server_use for e in server_use[k].edges),
            )
        return self._all

    def __getitem__(self, index: Any) -> Any:
        return self._edges()[index]

    def __len__(self) -> int:
        return len(self._edges())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(self._edges())
