"""What stage 2's listener-wide and proxy-wide choices need to know of each virtual host,
kept per virtual host and counted per listener.

Three choices look at every route of a listener: whether gRPC-Web can work there (some
route reaches a cluster that speaks HTTP/2, `grpc_web.py`), which static clusters need
their endpoints named (`autoHostRewrite`, `rewrite.py`), and whether the listener forwards
dynamically (its DNS cache cluster, `dynamicforwardproxy.py`). Scanning every route for them
on each edit made an edit cost the size of the configuration; the builder keeps each
virtual host's `HostFacts` while the virtual host is the same object and each listener's
`ListenerFacts` as counts, which an edit updates with the hosts that left and joined.
"""

from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gw.translator import ir
from gw.translator.ir.frozen import use_slot_setters


@use_slot_setters
@dataclass(frozen=True, slots=True)
class HostFacts:
    """One virtual host's share of the listener-wide choices."""

    #: The clusters its forwarded routes name (sorted; kept for every virtual host, and a
    #: tuple of one is a fifth of a set of one).
    targets: tuple[str, ...] = ()
    #: Some route takes its cluster from a request header (any cluster, HTTP/2 ones too).
    any_cluster: bool = False
    #: The clusters some route forwards to with `autoHostRewrite` (sorted).
    rewritten: tuple[str, ...] = ()
    #: Some HTTP filter may have work on it (False: `asks_no_filter`).
    asks_filters: bool = True
    #: Some route is forwarded dynamically (the dynamic forward proxy).
    forwards: bool = False


def host_facts(vhost: ir.VirtualHost) -> HostFacts:
    targets: set[str] = set()
    rewritten: set[str] = set()
    any_cluster = forwards = False
    for route in vhost.routes:
        action = route.action
        if not isinstance(action, ir.Forward):
            continue
        names = {w.cluster for w in action.clusters}
        targets |= names
        if action.auto_host_rewrite:
            rewritten |= names
        any_cluster = any_cluster or action.cluster_header is not None
        forwards = forwards or action.dynamic_forward_proxy is not None
    return HostFacts(
        tuple(sorted(targets)),
        any_cluster,
        tuple(sorted(rewritten)),
        not asks_no_filter(vhost),
        forwards,
    )


#: What places and routes a virtual host: its names, domains, matches and destinations.
#: Every other field of the host, its routes, their forwards and their clusters is an
#: option some HTTP filter or route setting may act on.
ROUTING_FIELDS: dict[type, frozenset[str]] = {
    ir.VirtualHost: frozenset({"name", "source", "domains", "routes"}),
    ir.Route: frozenset({"name", "match", "action", "source", "delegated_by"}),
    ir.Forward: frozenset({"clusters"}),
    ir.WeightedCluster: frozenset({"cluster", "weight"}),
}


def _options_of(cls: type) -> tuple[Callable[[Any], tuple[Any, ...]], tuple[Any, ...]]:
    """A getter of the option fields of `cls` (all of them, as one tuple) and their
    defaults: comparing two tuples is one call, where a loop over the fields is dozens."""
    fields = [f for f in dataclasses.fields(cls) if f.name not in ROUTING_FIELDS[cls]]
    if any(f.default is dataclasses.MISSING for f in fields):
        raise TypeError(f"{cls.__name__}: an option field without a plain default")
    getter = operator.attrgetter(fields[0].name, *(f.name for f in fields[1:]))
    return getter, tuple(f.default for f in fields)


_HOST_OPTIONS, _HOST_DEFAULTS = _options_of(ir.VirtualHost)
_ROUTE_OPTIONS, _ROUTE_DEFAULTS = _options_of(ir.Route)
_FORWARD_OPTIONS, _FORWARD_DEFAULTS = _options_of(ir.Forward)
_CLUSTER_OPTIONS, _CLUSTER_DEFAULTS = _options_of(ir.WeightedCluster)


def asks_no_filter(vhost: ir.VirtualHost) -> bool:
    """True when `vhost` and its routes set no option: every route forwards, and nothing
    beyond `ROUTING_FIELDS` differs from its default. Such a host (most of a large
    configuration) needs no HTTP filter on its listener and no per-filter config on its
    routes, so the listener's filters are chosen from the other hosts only, and its routes
    are written without asking the filters (`routes.build_virtual_host`). Both are checked
    on every golden input (`tests/unit/translator/envoy/test_hostfacts.py`)."""
    if _HOST_OPTIONS(vhost) != _HOST_DEFAULTS:
        return False
    for route in vhost.routes:
        action = route.action
        if type(action) is not ir.Forward or _ROUTE_OPTIONS(route) != _ROUTE_DEFAULTS:
            return False
        if _FORWARD_OPTIONS(action) != _FORWARD_DEFAULTS:
            return False
        for cluster in action.clusters:
            if _CLUSTER_OPTIONS(cluster) != _CLUSTER_DEFAULTS:
                return False
    return True


@dataclass(slots=True)
class ListenerFacts:
    """The facts of a listener's virtual hosts, counted (a name with count 0 is dropped)."""

    targets: Counter[str] = field(default_factory=Counter)
    any_cluster: int = 0
    rewritten: Counter[str] = field(default_factory=Counter)
    forwards: int = 0

    @classmethod
    def of(cls, hosts: Iterable[HostFacts]) -> ListenerFacts:
        return cls().moved((), hosts)

    def moved(self, left: Iterable[HostFacts], joined: Iterable[HostFacts]) -> ListenerFacts:
        """These facts after the hosts of `left` left and those of `joined` joined (a new
        object: the last build's stay as they were)."""
        out = ListenerFacts(
            Counter(self.targets), self.any_cluster, Counter(self.rewritten), self.forwards
        )
        for sign, hosts in ((-1, left), (1, joined)):
            for host in hosts:
                for name in host.targets:
                    out.targets[name] += sign
                for name in host.rewritten:
                    out.rewritten[name] += sign
                out.any_cluster += sign * host.any_cluster
                out.forwards += sign * host.forwards
        out.targets, out.rewritten = +out.targets, +out.rewritten
        return out

    def reaches_http2(self, http1_only: frozenset[str]) -> bool:
        """Some route may reach a cluster that speaks HTTP/2: one named by a header, or one
        not known to speak HTTP/1.1 only."""
        return bool(self.any_cluster) or any(n not in http1_only for n in self.targets)
