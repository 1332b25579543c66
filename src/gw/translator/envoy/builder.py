"""`XdsBuilder`: each proxy's xDS built again from the last build, redoing what changed.

Stage 2 is a function of the Proxy IR; the builder only decides what it can take from the
previous translation's build instead of making it again:

- a virtual host's Envoy message, while the IR virtual host is the very same object
  (stage 1 hands back the same object for a VirtualService that did not change);
- a listener's HTTP filters: each filter of `filters.HTTP_FILTERS` depends only on the
  virtual hosts that use it (`uses`: those for which the filter built for them alone
  differs from the filter built for none), so a filter is built again only when a virtual
  host that left or joined the listener uses it;
- a listener and its connection manager, while its settings and filters are the same;
- the route configuration of a plain listener while its virtual hosts are the same; of a
  sharded one (`shards.py`), every shard that no virtual host left or joined, and every
  host name's scope; a route configuration made again takes its other virtual hosts as
  they were serialized;
- a TLS listener's filter chain and route configuration of each virtual host, while the
  virtual host is the same object;
- clusters, while the IR cluster is the same object.

What left and joined each listener comes from stage 1 (`ListenerChanges`); without it the
builder compares the listener's virtual hosts with the last build's (a pass over them,
still building only what is new). A builder is made from the previous translation's and
never changes it, so the cache of any earlier translation stays valid.

Route configurations and scopes are kept serialized (`Wire`), and so is each virtual host
of a route configuration: the messages are let go once serialized (see `xds.py`).
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from envoy.config.listener.v3 import listener_components_pb2 as lc_pb2
from envoy.config.listener.v3 import listener_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.config.route.v3 import route_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names, shards, tls
from gw.translator.envoy.clusters import build_cluster, build_load_assignment
from gw.translator.envoy.dynamicforwardproxy import dns_cache_clusters, retarget, retargets
from gw.translator.envoy.extauth import server_headers
from gw.translator.envoy.filters import HTTP_FILTERS
from gw.translator.envoy.grpc_web import http1_only, where_grpc_can_reach, with_grpc_web
from gw.translator.envoy.hostfacts import HostFacts, ListenerFacts, host_facts
from gw.translator.envoy.listeners import (
    layer4_listener,
    listener_http_filter,
    plain_listener,
    tls_chain,
    tls_listener,
)
from gw.translator.envoy.rewrite import name_static_endpoints
from gw.translator.envoy.routes import (
    build_route_configurations,
    build_virtual_host,
    route_configuration,
    route_configuration_wire,
)
from gw.translator.envoy.secrets import build_secrets
from gw.translator.envoy.xds import Messages, Resource, Wire, Xds

#: For each listener name: the virtual hosts that left it and those that joined it.
ListenerChanges = Mapping[str, tuple[Sequence[ir.VirtualHost], Sequence[ir.VirtualHost]]]
Changes = tuple[Sequence[ir.VirtualHost], Sequence[ir.VirtualHost]]
#: A virtual host and its message: serialized once a route configuration holds it.
Built = tuple[ir.VirtualHost, bytes | rc_pb2.VirtualHost]


def uses(vhost: ir.VirtualHost) -> frozenset[int]:
    """The filters (by position in `HTTP_FILTERS`) `vhost` needs on its listener."""
    return frozenset(
        i for i, f in enumerate(HTTP_FILTERS) if f.listener_filter((vhost,)) != _none(i)
    )


_NONE: list[hcm_pb2.HttpFilter | None] = []


def _none(index: int) -> hcm_pb2.HttpFilter | None:
    """Filter `index` as built for no virtual host (the same every time: kept)."""
    if not _NONE:
        _NONE.extend(f.listener_filter(()) for f in HTTP_FILTERS)
    return _NONE[index]


@dataclass(slots=True)
class _Plain:
    """What the builder keeps of one plain listener."""

    #: The listener as built (gRPC-Web off where it cannot work).
    listener: ir.Listener
    stripped: tuple[str, ...]
    #: Each filter as built for the listener's virtual hosts (None: not needed).
    filters: list[hcm_pb2.HttpFilter | None]
    message: listener_pb2.Listener
    routes: dict[str, Wire] = field(default_factory=dict)
    #: Unsharded: each virtual host's message, by id.
    protos: dict[int, Built] = field(default_factory=dict)
    #: How many virtual hosts have a domain that is not an exact host name.
    inexact: int = 0
    #: Sharded: the shard count, each shard's virtual hosts (by name), the scopes (one
    #: per host name).
    count: int = 0
    shards: dict[int, list[Built]] = field(default_factory=dict)
    scopes: Messages = field(default_factory=Messages)
    #: The listener stage 1 gave, its virtual hosts' facts, and the clusters known to
    #: speak HTTP/1.1 only when it was built.
    source: ir.Listener | None = None
    facts: ListenerFacts = field(default_factory=ListenerFacts)
    http1: frozenset[str] = frozenset()


@dataclass(slots=True)
class _Tls:
    """What the builder keeps of one TLS listener: each virtual host's chain and routes."""

    shell: ir.Listener
    stripped: tuple[str, ...]
    #: By id of the virtual host: it, its filter chain, its route configuration's name and
    #: the configuration.
    chains: dict[int, tuple[ir.VirtualHost, lc_pb2.FilterChain, str, Wire]]


class XdsBuilder:
    """Builds each proxy's xDS, reusing what the previous translation's builder made."""

    def __init__(
        self, previous: XdsBuilder | None = None, shard_from: int = shards.SHARD_FROM
    ) -> None:
        self.shard_from = shard_from
        self._plain_before = previous._plain if previous is not None else {}
        self._tls_before = previous._tls if previous is not None else {}
        self._clusters_before = previous._clusters if previous is not None else {}
        self._plain: dict[tuple[str, str], _Plain] = {}
        self._tls: dict[tuple[str, str], _Tls] = {}
        self._clusters: dict[int, tuple[ir.Cluster, list[tuple[str, Message]]]] = {}
        self._facts_before = previous._facts if previous is not None else {}
        self._facts: dict[int, tuple[ir.VirtualHost, HostFacts]] = {}

    def build(self, proxy: ir.Proxy, changes: ListenerChanges | None = None) -> Xds:
        out: dict[str, dict[str, Resource]] = {t: {} for t in names.TYPE_URLS}
        stripped = server_headers(proxy.auth_configs)
        scopes: list[Messages] = []
        http1 = http1_only(proxy.clusters)
        #: Each listener (and hybrid HTTP part) with its virtual hosts' facts.
        facts: list[tuple[ir.Listener, ListenerFacts]] = []
        for listener in proxy.listeners:
            if listener.tcp is not None or listener.matched:  # TCP or hybrid: built whole
                listener = where_grpc_can_reach(listener, proxy.clusters)
                out[names.LISTENER][listener.name] = layer4_listener(listener, stripped)
                for routes in build_route_configurations(listener):
                    out[names.ROUTE][routes.name] = routes
                for part in (listener, *(m.http for m in listener.matched if m.http)):
                    facts.append((part, self._facts_of(part.virtual_hosts)))
                continue
            key = (proxy.role, listener.name)
            given = changes.get(listener.name) if changes is not None else None
            state = self._again(key, listener, stripped, given, http1)
            if state is None and tls.is_tls(listener):
                found = self._facts_of(listener.virtual_hosts)
                listener = with_grpc_web(listener, found.reaches_http2(http1))
                done = self._tls[key] = self._tls_listener(key, listener, stripped)
                out[names.LISTENER][listener.name] = _tls_message(listener, done)
                for _, _, name, routes in done.chains.values():
                    out[names.ROUTE][name] = routes
                facts.append((listener, found))
                continue
            if state is None:
                state = self._new(listener, stripped, self._plain_before.get(key), http1)
            self._plain[key] = state
            facts.append((state.listener, state.facts))
            out[names.LISTENER][listener.name] = state.message
            out[names.ROUTE].update(state.routes)
            if state.count:
                scopes.append(state.scopes)
        for cluster in proxy.clusters:
            for type_url, message in self._cluster(cluster):
                out[type_url][cluster.name] = message
        clusters = out[names.CLUSTER]
        rewritten = {name for _, found in facts for name in found.rewritten}
        for name in rewritten & clusters.keys():
            clusters[name] = _named_endpoints(cast(Message, clusters[name]))  # never a Wire
        forwarding = (
            listener.plugins.dynamic_forward_proxy
            for listener, found in facts
            if found.forwards or listener.plugins.dynamic_forward_proxy is not None
        )
        for type_url, name, resource in dns_cache_clusters(forwarding):
            out[type_url][name] = resource
        for secret in proxy.secrets:
            for resource in build_secrets(secret):
                out[names.SECRET][resource.name] = resource
        for http_filter in HTTP_FILTERS:
            for type_url, name, resource in http_filter.resources(proxy):
                out[type_url][name] = resource
        resources: dict[str, Mapping[str, Message]] = {t: Messages(r) for t, r in out.items()}
        resources[names.SCOPED_ROUTE] = _all_scopes(scopes)
        return Xds(resources)

    # -- plain listeners ------------------------------------------------------------------

    def _again(
        self,
        key: tuple[str, str],
        listener: ir.Listener,
        stripped: tuple[str, ...],
        changes: Changes | None,
        http1: frozenset[str],
    ) -> _Plain | None:
        """The last build's plain listener with what changed; None when it must be built
        anew (new filters or route options of its own, many changes, a TLS host, another
        shard count)."""
        before = self._plain_before.get(key)
        if before is None or before.stripped != stripped or before.source is None:
            return None
        if before.source is listener and before.http1 == http1:
            return before
        source, vhosts = listener, listener.virtual_hosts
        left, joined = (
            changes if changes is not None else _diff(before.source.virtual_hosts, vhosts)
        )
        if len(left) + len(joined) > len(vhosts) // 4 + 16 or any(v.tls for v in joined):
            return None  # as cheap to build it all
        facts = before.facts.moved(map(self._host, left), map(self._host, joined))
        listener = with_grpc_web(listener, facts.reaches_http2(http1))
        same_shell = _same_shell(before.listener, listener)
        if not same_shell and not _routed_alike(before.listener, listener):
            return None
        inexact = before.inexact + _inexact(joined) - _inexact(left)
        count = _count(len(vhosts), inexact, self.shard_from)
        if count != before.count:
            return None
        filters = list(before.filters)
        for i in frozenset().union(*(uses(v) for v in (*left, *joined))):
            filters[i] = listener_http_filter(HTTP_FILTERS[i], listener, vhosts)
        message = before.message
        if filters != before.filters or not same_shell:
            message = _message(listener, filters, stripped, bool(count))
        state = _Plain(listener, stripped, filters, message, inexact=inexact, count=count)
        state.source, state.facts, state.http1 = source, facts, http1
        if count:
            _reshard(state, before, left, joined)
        elif left or joined:
            state.protos = self._protos(vhosts, before.protos)
            state.routes = _routes(listener, state.protos)
        else:  # the same virtual hosts: the same route configuration (its shell is the same)
            state.protos, state.routes = before.protos, before.routes
        return state

    def _new(
        self,
        listener: ir.Listener,
        stripped: tuple[str, ...],
        before: _Plain | None,
        http1: frozenset[str],
    ) -> _Plain:
        source, vhosts = listener, listener.virtual_hosts
        hosts = [self._host(v) for v in vhosts]
        facts = ListenerFacts.of(hosts)
        listener = with_grpc_web(listener, facts.reaches_http2(http1))
        # A host that asks no filter for anything changes none of them (`_again` relies on
        # it too, host by host): the filters are chosen from the others.
        asking = [v for v, found in zip(vhosts, hosts, strict=True) if found.asks_filters]
        filters = [listener_http_filter(f, listener, asking) for f in HTTP_FILTERS]
        inexact = _inexact(vhosts)
        count = _count(len(vhosts), inexact, self.shard_from)
        message = _message(listener, filters, stripped, bool(count))
        state = _Plain(listener, stripped, filters, message, inexact=inexact, count=count)
        state.source, state.facts, state.http1 = source, facts, http1
        known = _known(before)
        if count:
            members, shard_by_host = shards.layout(vhosts, count)
            for shard, in_shard in members.items():
                state.shards[shard] = [self._built(v, known) for v in in_shard]
                name = shards.shard_name(listener, shard)
                state.routes[name] = _configuration(name, state.shards[shard], listener)
            state.scopes = Messages(
                {
                    shards.scope_name(listener, h): Wire.of(shards.scope(listener, h, shard))
                    for h, shard in shard_by_host.items()
                }
            )
        else:
            state.protos = self._protos(vhosts, known)
            state.routes = _routes(listener, state.protos)
        return state

    # -- TLS listeners, clusters ----------------------------------------------------------

    def _tls_listener(
        self, key: tuple[str, str], listener: ir.Listener, stripped: tuple[str, ...]
    ) -> _Tls:
        before = self._tls_before.get(key)
        shell = dataclasses.replace(listener, virtual_hosts=())
        reuse = before is not None and before.shell == shell and before.stripped == stripped
        chains = {}
        for vhost in listener.virtual_hosts:
            found = before.chains.get(id(vhost)) if before is not None and reuse else None
            if found is None or found[0] is not vhost:
                name = tls.route_config_name(listener, vhost)
                routes = _configuration(name, [(vhost, build_virtual_host(vhost))], listener)
                found = (vhost, tls_chain(listener, vhost, stripped), name, routes)
            chains[id(vhost)] = found
        return _Tls(shell, stripped, chains)

    def _facts_of(self, vhosts: Sequence[ir.VirtualHost]) -> ListenerFacts:
        return ListenerFacts.of(self._host(v) for v in vhosts)

    def _host(self, vhost: ir.VirtualHost) -> HostFacts:
        """`vhost`'s facts, kept while it is the same object (a cache only: they are a
        function of the virtual host)."""
        found = self._facts.get(id(vhost))
        if found is not None and found[0] is vhost:
            return found[1]  # asked again in this build
        found = self._facts_before.get(id(vhost))
        if found is None or found[0] is not vhost:
            found = (vhost, host_facts(vhost))
        self._facts[id(vhost)] = found
        return found[1]

    def _built(self, vhost: ir.VirtualHost, known: Mapping[int, Built]) -> Built:
        """`vhost`'s message as `known` has it, else built (with what its facts say)."""
        found = known.get(id(vhost))
        if found is not None and found[0] is vhost:
            return found
        return (vhost, build_virtual_host(vhost, asks_filters=self._host(vhost).asks_filters))

    def _protos(
        self, vhosts: Sequence[ir.VirtualHost], known: Mapping[int, Built]
    ) -> dict[int, Built]:
        return {id(v): self._built(v, known) for v in vhosts}

    def _cluster(self, cluster: ir.Cluster) -> list[tuple[str, Message]]:
        known = self._clusters_before.get(id(cluster))
        if known is not None and known[0] is cluster:
            built = known[1]
        else:
            built = [(names.CLUSTER, build_cluster(cluster))]
            if cluster.discovery == "eds":
                built.append((names.ENDPOINT, build_load_assignment(cluster)))
        self._clusters[id(cluster)] = (cluster, built)
        return built


def _count(vhosts: int, inexact: int, shard_from: int) -> int:
    """A listener's shard count (0: not sharded)."""
    return shards.shard_count(vhosts) if shards.shardable(vhosts, inexact, shard_from) else 0


def _inexact(vhosts: Sequence[ir.VirtualHost]) -> int:
    return sum(not shards.exact_host(v) for v in vhosts)


def _reshard(
    state: _Plain, before: _Plain, left: Sequence[ir.VirtualHost], joined: Sequence[ir.VirtualHost]
) -> None:
    """A sharded listener's shards and scopes after `left` left and `joined` joined. A
    host name has a scope while a virtual host of its shard claims it: only the shards
    the moved hosts are in are looked at (a count of every host name, copied per edit,
    cost 3 ms at 100,000)."""
    listener, count = state.listener, state.count
    state.shards = dict(before.shards)
    changed: dict[int, list[Built]] = {}
    for vhost in left:
        for shard in {shards.shard_of(h, count) for h in shards.hosts_of(vhost)}:
            members = changed.setdefault(shard, list(state.shards[shard]))
            del members[next(i for i, m in enumerate(members) if m[0] is vhost)]
    for vhost in joined:
        built = (vhost, build_virtual_host(vhost))
        for shard in {shards.shard_of(h, count) for h in shards.hosts_of(vhost)}:
            members = changed.setdefault(shard, list(state.shards.get(shard, ())))
            members.insert(bisect.bisect_right(members, vhost.name, key=_name_of), built)
    put: dict[str, Resource] = {}
    removed: list[str] = []
    for shard, members in changed.items():
        was, now = _claimed(before.shards.get(shard, ())), _claimed(members)
        for host in now - was:
            scope = shards.scope(listener, host, shards.shard_of(host, count))
            put[shards.scope_name(listener, host)] = Wire.of(scope)
        removed += [shards.scope_name(listener, host) for host in was - now]
    state.routes = dict(before.routes)
    for shard, members in changed.items():
        name = shards.shard_name(listener, shard)
        if members:
            state.shards[shard] = members
            state.routes[name] = _configuration(name, members, listener)
        else:
            del state.shards[shard]
            del state.routes[name]
    state.scopes = before.scopes.changed(put, removed) if put or removed else before.scopes


def _claimed(members: Sequence[Built]) -> set[str]:
    """The host names a shard's `members` claim."""
    return {host for m in members for host in shards.hosts_of(m[0])}


def _name_of(built: Built) -> str:
    return built[0].name


def _all_scopes(scopes: list[Messages]) -> Messages:
    """The scopes of every sharded listener, in name order (each listener's names share a
    prefix, so one listener's are together)."""
    if len(scopes) == 1:
        return scopes[0]
    merged: dict[str, Resource] = {}
    for each in scopes:
        merged.update(each.raw_items())
    return Messages(merged)


def _routed_alike(one: ir.Listener, two: ir.Listener) -> bool:
    """The same listener but for its virtual hosts, how it speaks HTTP and how it accepts
    connections (`http`, `options`), which only its Listener message reads: its filters,
    route configurations and scopes are as they were (a Gateway's `serverName` changed
    rebuilds one message, not the scopes and shards of 100,000 hosts)."""
    return _same_shell(
        dataclasses.replace(one, http=_HTTP, options=_OPTIONS),
        dataclasses.replace(two, http=_HTTP, options=_OPTIONS),
    )


_HTTP, _OPTIONS = ir.HttpSettings(), ir.ListenerOptions()


def _same_shell(one: ir.Listener, two: ir.Listener) -> bool:
    """The same listener but for its virtual hosts."""
    return dataclasses.replace(one, virtual_hosts=()) == dataclasses.replace(two, virtual_hosts=())


def _diff(before: Sequence[ir.VirtualHost], now: Sequence[ir.VirtualHost]) -> Changes:
    """The virtual hosts (by identity) that left and joined."""
    old = {id(v): v for v in before}
    new = {id(v): v for v in now}
    return [v for k, v in old.items() if k not in new], [v for k, v in new.items() if k not in old]


def _message(
    listener: ir.Listener,
    filters: Sequence[hcm_pb2.HttpFilter | None],
    stripped: tuple[str, ...],
    scoped: bool,
) -> listener_pb2.Listener:
    chain = [f for f in filters if f is not None]
    return plain_listener(listener, chain, stripped, scoped=scoped)


def _known(before: _Plain | None) -> dict[int, Built]:
    """The virtual hosts' messages of `before`, to reuse in a listener built anew: none
    when its dynamically forwarded routes went to a forward proxy of its own, since they
    are its route configurations' own, changed for it (`_configuration`)."""
    if before is None or before.listener.plugins.dynamic_forward_proxy is not None:
        return {}
    if not before.count:
        return before.protos
    return {id(b[0]): b for members in before.shards.values() for b in members}


def _routes(listener: ir.Listener, protos: dict[int, Built]) -> dict[str, Wire]:
    name = listener.route_config_name
    vhosts = [protos[id(v)] for v in listener.virtual_hosts]
    config = _configuration(name, vhosts, listener)
    for built in vhosts:
        protos[id(built[0])] = built  # the configuration's own message (`_configuration`)
    return {name: config}


def _configuration(name: str, vhosts: list[Built], listener: ir.Listener) -> Wire:
    """A route configuration of `listener` (its `routeOptions`; its dynamically forwarded
    routes sent to its own forward proxy cluster when it has settings of its own),
    serialized.

    The virtual hosts not yet serialized are, once `retarget` has changed them (doing it
    again would change nothing), and `vhosts` is made to hold their bytes: a later
    configuration takes them as they are, and the messages are let go (see `xds.py`)."""
    fresh = [(i, b[1]) for i, b in enumerate(vhosts) if isinstance(b[1], rc_pb2.VirtualHost)]
    if fresh:
        messages: Sequence[rc_pb2.VirtualHost] = [m for _, m in fresh]
        if retargets(listener):  # changed in a copy: the messages built stay as built
            messages = retarget([route_configuration(name, messages)], listener)[0].virtual_hosts
        for (i, _), message in zip(fresh, messages, strict=True):
            vhosts[i] = (vhosts[i][0], message.SerializeToString(deterministic=True))
    data = [cast(bytes, b[1]) for b in vhosts]
    wire = route_configuration_wire(name, data, listener.route_options)
    return Wire(route_pb2.RouteConfiguration, wire)


def _named_endpoints(cluster: Message) -> Message:
    """A static cluster's copy whose endpoints are named by their address
    (`autoHostRewrite`); the cached message itself is never changed."""
    named = type(cluster)()
    named.CopyFrom(cluster)
    name_static_endpoints({"": named}, [""])
    return named


def _tls_message(listener: ir.Listener, state: _Tls) -> listener_pb2.Listener:
    return tls_listener(listener, (chain for _, chain, _, _ in state.chains.values()))
