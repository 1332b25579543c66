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

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

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
    return HostFacts(tuple(sorted(targets)), any_cluster, tuple(sorted(rewritten)), forwards)


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
