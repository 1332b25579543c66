"""Stage 1 as ordered passes: `build_proxy()` runs `PASSES` over one `Build` (build.py).

Each pass does one job, reading what the snapshot and the passes before it hold and
filling its own field of the build; its position in `PASSES` is its order. References are
resolved before anything uses them; every finding lands on its resource with the field
path; rejections then propagate once along the recorded references; only then is each
resource's contribution chosen (fresh, or last accepted while rejected), the Proxy
assembled with gw's own servers and the endpoints attached, and split per proxy name.

What a new option costs here: nothing, when it is an option of a virtual host or route
(its builder is called from `virtualhosts.py` / `routes.py`); one line in `PASSES`, when it
is a new resource kind or a check across resources; one line in `SERVERS`, when it is a
new server of gw's own that hosts call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from gw import api
from gw.api import ResourceKey
from gw.snapshot import Snapshot
from gw.translator import ir
from gw.translator.gateway import (
    extauth,
    extproc,
    gateways,
    hybrid,
    install,
    placement,
    ratelimit,
    settings,
    tls,
    virtualhosts,
)
from gw.translator.gateway.authconfig import build_auth_configs
from gw.translator.gateway.build import Build, BuildResult
from gw.translator.gateway.contribution import Contribution, ListenerRole
from gw.translator.gateway.fallback import choose_contributions
from gw.translator.gateway.hostcache import build_hosts
from gw.translator.gateway.optionrefs import check_option_resources
from gw.translator.gateway.orch import add_service_clusters
from gw.translator.gateway.proxies import assemble, build_proxies
from gw.translator.gateway.ratelimitconfig import build_rate_limit_configs
from gw.translator.gateway.servers import (
    ServerKind,
    check_server_use,
    resolve_servers,
    server_uses,
)
from gw.translator.gateway.stagecache import (
    NO_SERVER_USE,
    PendingStageCache,
    ServerUse,
    StageCache,
)
from gw.translator.gateway.traffic import refuse_in_route_tables
from gw.translator.gateway.upstreamgroups import check_upstream_groups
from gw.translator.gateway.upstreams import build_upstreams
from gw.translator.options import Options
from gw.translator.refs import propagate_rejections
from gw.translator.reports import Reports

Pass = Callable[[Build], None]

#: gw's own servers that virtual hosts call, each attached by `servers.py`'s one mechanism.
SERVERS: tuple[ServerKind[Any], ...] = (extauth.SERVER, ratelimit.SERVER, *extproc.SERVERS)


def build_proxy(
    snapshot: Snapshot,
    options: Options,
    previous: Mapping[ResourceKey, Contribution],
    cache: StageCache | None = None,
) -> BuildResult:
    """The Proxies for `snapshot` (the default one first), every resource's contribution as
    last accepted, every reference resolved on the way, and what the next translation may
    reuse; findings in `result.reports`. With the previous translation's `cache`, only
    what depends on what changed is redone when that can be told (`incremental.py`)."""
    from gw.translator.gateway import incremental

    if cache is not None:
        done = incremental.update(cache, snapshot, options, previous)
        if done is not None:
            return done
    build = Build.start(
        snapshot,
        options,
        previous,
        cache.hosts if cache is not None else None,
        known=cache.resources if cache is not None else None,
    )
    for run in GLOBAL_PASSES:
        run(build)
    after_globals = incremental.Checkpoint.of(build)
    for run in HOST_PASSES:
        run(build)
    return build.result(
        PendingStageCache(functools.partial(incremental.cache_of, build, snapshot, after_globals))
    )


def report_input_errors(build: Build) -> None:
    """Manifests that did not parse: the resource they meant is rejected (a duplicate copy
    of a resource that parsed elsewhere only warns)."""
    for error in build.snapshot.errors:
        if error.key is None:
            continue
        where = str(error.source) if error.source else ""
        if error.key in build.broken:
            build.reports.of(error.key).error(where, error.message)
        else:
            build.reports.of(error.key).warning(where, error.message)


def read_settings(build: Build) -> None:
    """The Settings read: the user's `<namespace>.default` over the install's."""
    build.settings, build.settings_key = install.read_settings(
        build.snapshot, build.options, build.reports
    )


def check_settings(build: Build) -> None:
    """The user's Settings: a warning per field gw does not act on (`settings.py`)."""
    if build.settings_key is not None:
        user = build.snapshot.resources.get(build.settings_key)
        if isinstance(user, api.Settings):
            settings.check_settings(user, build.reports.of(build.settings_key))


def resolve_server_refs(build: Build) -> None:
    build.servers = resolve_servers(
        SERVERS, build.settings, build.settings_key, build.refs, build.reports
    )


def build_gateway_listeners(build: Build) -> None:
    build.built.update(
        gateways.build_gateways(
            build.snapshot,
            build.refs,
            build.reports,
            keep_empty=build.translate_empty_gateways,
            grpc_web=build.grpc_web,
            now=build.options.now,
            settings=build.settings,
        )
    )


def choose_gateways(build: Build) -> None:
    build.gateways = placement.choose_gateways(
        build.snapshot,
        build.broken,
        build.built,
        build.previous,
        build.reports,
        build.options,
        grpc_web=build.grpc_web,
    )


def build_upstream_clusters(build: Build) -> None:
    build.built.update(build_upstreams(build.snapshot, build.refs, build.reports, build.options))


def build_server_configs(build: Build) -> None:
    """What the extauth and rate-limit servers are served: AuthConfigs, RateLimitConfigs."""
    build.built.update(
        build_auth_configs(
            build.snapshot,
            build.settings,
            build.refs,
            build.reports,
            build.options.session_pass_key,
        )
    )
    build.built.update(
        build_rate_limit_configs(build.snapshot, build.reports, build.settings, build.settings_key)
    )


def check_shared_options(build: Build) -> None:
    """What virtual services share, checked on its own first: UpstreamGroups,
    VirtualHostOptions, RouteOptions; RouteTables are Accepted unless a delegating route
    finds something wrong."""
    check_upstream_groups(build.refs, build.reports)
    check_option_resources(build.refs, build.reports)
    refuse_in_route_tables(build.refs, build.reports)


def build_virtual_services(build: Build) -> None:
    build.hosts, build.host_cache = build_hosts(
        build.snapshot,
        build.options,
        build.refs,
        build.reports,
        require_rbac=build.require_rbac,
        route_policy=build.route_policy,
        cache=build.cache,
    )


def place_virtual_hosts(build: Build) -> None:
    build.hosts = placement.place_virtual_hosts(
        build.hosts, build.gateways, build.snapshot, build.options
    )


def check_domain_conflicts(build: Build) -> None:
    build.conflicts = virtualhosts.check_domain_conflicts(build.hosts, build.reports)
    placement.warn_domain_conflicts(build.conflicts, build.gateways, build.reports)


def check_sni_conflicts(build: Build) -> None:
    tls.check_sni_conflicts(build.hosts, build.reports)
    hybrid.check_part_conflicts(build.hosts, build.gateways, build.reports)


def check_server_users(build: Build) -> None:
    for vs in build.snapshot.of_kind(api.VirtualService):
        use = build.server_use[vs.key] = server_use_of(build, vs)
        if use is not NO_SERVER_USE:  # nearly every VirtualService uses no server
            build.reports.add(use.findings)
            build.refs.add(use.edges)


def server_use_of(build: Build, vs: api.VirtualService) -> ServerUse:
    """One VirtualService's check against gw's own servers, as values (one shared empty
    value for the many that use none)."""
    uses = server_uses(build.servers, vs)
    if not uses:
        return NO_SERVER_USE
    settings = ResourceKey(api.Settings.KIND, build.options.namespace, install.SETTINGS_NAME)
    refs, reports = build.refs.scope(), Reports()
    check_server_use(build.servers, vs, uses, refs, reports, settings)
    return ServerUse(findings=reports.findings(), edges=tuple(refs.edges))


def add_direct_service_clusters(build: Build) -> None:
    add_service_clusters(build.hosts)


def propagate(build: Build) -> None:
    from gw.translator.gateway.incremental import outside_closure

    rejected = propagate_rejections(build.refs, build.reports)
    build.closure = outside_closure(build.refs.edges, build.reports, build.reports.keys(), rejected)


def choose(build: Build) -> None:
    keys = build.snapshot.sorted_keys(build.broken)
    fresh = {**build.built, **build.hosts}
    build.accepted = choose_contributions(keys, fresh, build.previous, build.reports)
    build.stale = frozenset(k for k, c in build.accepted.items() if fresh.get(k) is not c)


def assemble_proxy(build: Build) -> None:
    build.whole, build.by_role = assembled(build, build.accepted)


def assembled(
    build: Build, accepted: Mapping[ResourceKey, Contribution], *, hosts: bool = True
) -> tuple[ir.Proxy, dict[ListenerRole, list[ir.VirtualHost]]]:
    """`accepted` assembled as this build's (`incremental.py` gives only the contributions
    that hold more than virtual hosts, and places the virtual hosts itself: no `hosts`)."""
    return assemble(
        accepted,
        build.stale,
        build.servers,
        build.snapshot,
        build.options,
        build.reports,
        build.gateways,
        hosts=hosts,
    )


def warn_empty_gateways(build: Build) -> None:
    placement.warn_empty_gateways(build.gateways, build.by_role, build.reports)


def split_proxies(build: Build) -> None:
    assert build.whole is not None
    build.proxies = build_proxies(build.whole, build.by_role, build.gateways)


#: The passes over the resources that are not VirtualServices (which are few).
GLOBAL_PASSES: tuple[Pass, ...] = (
    report_input_errors,  # manifests that do not parse: their resources are rejected
    read_settings,  # the Settings read: the user's over the install's
    check_settings,  # a warning per Settings field gw does not act on
    resolve_server_refs,  # the extauth and rate-limit servers the Settings name
    build_gateway_listeners,  # Gateways → listeners
    choose_gateways,  # each as built or as last accepted; port clashes
    build_upstream_clusters,  # Upstreams → clusters
    build_server_configs,  # AuthConfigs, RateLimitConfigs → what gw's servers are served
    check_shared_options,  # UpstreamGroups, VirtualHostOptions, RouteOptions, RouteTables
)
#: The passes from the VirtualServices on (`incremental.py` repeats them for a few; a
#: pass added here must be added there too, or every translation is a full one).
HOST_PASSES: tuple[Pass, ...] = (
    build_virtual_services,  # VirtualServices → virtual hosts, one at a time (cached)
    place_virtual_hosts,  # on the listeners of the gateways that select them
    check_domain_conflicts,  # one domain, two hosts on a listener: both rejected
    check_sni_conflicts,  # one SNI name, two TLS hosts (or a hybrid gateway's part): rejected
    check_server_users,  # hosts that need a server the Settings do not name: rejected
    add_direct_service_clusters,  # clusters of the services routes address directly
    propagate,  # referrers of rejected resources are rejected
    choose_gateways,  # again: a Gateway rejected through a reference keeps its last listener
    choose,  # each resource's contribution: fresh, or last accepted while rejected
    assemble_proxy,  # one Proxy; servers and endpoints attached
    warn_empty_gateways,  # gateways that select no host say so
    split_proxies,  # one Proxy per proxy name
)
PASSES = GLOBAL_PASSES + HOST_PASSES
