"""Large plain listeners: virtual hosts in shards of route configurations, chosen by Host.

Envoy rebuilds a whole route configuration whenever any part of it changes, at a cost
that grows with its virtual hosts: with one configuration of 100,000, every edited
VirtualService would make Envoy rebuild 100,000. A listener with at least `SHARD_FROM` virtual
hosts, all of whose domains name exact hosts, is served instead through Envoy's scoped
routes (SRDS): the connection manager takes the `Host` (without its port) as the scope key;
every host name is a `ScopedRouteConfiguration` pointing at the shard that holds it; a
shard is a route configuration of the virtual hosts whose host names hash to it. An edit
then changes one shard of about `SHARD_SIZE` hosts (a few milliseconds for Envoy), and a
new or removed host name one scope.

Routing is unchanged, because without wildcard domains the virtual host a request matches
is among those claiming its host name, all in one shard (a `host:port` domain is in the
shard of `host`). Two things differ from one route configuration: a `Host` that matches no
scope is answered 404 before any virtual host is looked at (exactly what a listener
without a `*` host answers), and scope keys are compared as sent, so a client sending an
upper-case host name gets that 404 where one configuration would have matched it
case-insensitively (clients send host names in lower case; the `domains` of a
VirtualService are lower-cased). A listener with any wildcard domain keeps one route
configuration.

The number of shards is a power of two that depends on the number of virtual hosts only
(about `SHARD_SIZE` hosts each, at most `MAX_SHARDS`), so that the same listener always
gives the same shards, whichever translation made it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from envoy.config.route.v3 import scoped_route_pb2

from gw.translator import ir
from gw.translator.options import SHARD_ROUTES_FROM

#: A plain listener with this many virtual hosts or more is sharded (when it can be).
SHARD_FROM = SHARD_ROUTES_FROM
#: About how many host names a shard holds, and the most shards a listener has.
SHARD_SIZE = 128
MAX_SHARDS = 4_096


def shardable(vhosts: int, inexact: int, shard_from: int = SHARD_FROM) -> bool:
    """Whether a listener of `vhosts` virtual hosts, `inexact` of which are not
    `exact_host`, is served through shards (see the module)."""
    return bool(shard_from) and vhosts >= shard_from and not inexact


def exact_host(vhost: ir.VirtualHost) -> bool:
    """A plain virtual host whose domains all name exact hosts."""
    return vhost.tls is None and all(exact(d) for d in vhost.domains)


def exact(domain: str) -> bool:
    """A domain naming one host (with any port, or a given one)."""
    host = host_of(domain)
    return bool(host) and "*" not in host and not domain.startswith("[")


def host_of(domain: str) -> str:
    """The host name of a domain (`a.test:*`, `a.test:8080` → `a.test`): the scope key."""
    return domain.split(":", 1)[0]


def hosts_of(vhost: ir.VirtualHost) -> frozenset[str]:
    return frozenset(host_of(d) for d in vhost.domains)


def shard_count(vhosts: int) -> int:
    count = 1
    while count * SHARD_SIZE < vhosts and count < MAX_SHARDS:
        count *= 2
    return count


def shard_of(host: str, count: int) -> int:
    return zlib.crc32(host.encode()) % count


def shard_name(listener: ir.Listener, shard: int) -> str:
    return f"{listener.route_config_name}-{shard:04x}"


def scope_name(listener: ir.Listener, host: str) -> str:
    return f"{listener.route_config_name}/{host}"


def scope(
    listener: ir.Listener, host: str, shard: int
) -> scoped_route_pb2.ScopedRouteConfiguration:
    """The scope of one host name: its key, and the shard holding its virtual hosts
    (`shard_of` the host name)."""
    out = scoped_route_pb2.ScopedRouteConfiguration(
        name=scope_name(listener, host), route_configuration_name=shard_name(listener, shard)
    )
    out.key.fragments.add().string_key = host
    return out


def layout(
    vhosts: Iterable[ir.VirtualHost], count: int
) -> tuple[dict[int, list[ir.VirtualHost]], dict[str, int]]:
    """Each shard's virtual hosts, in listener order (a host in several shards is in each),
    and the shard of each host name they claim: one pass over the host names, each
    hashed once."""
    members: dict[int, list[ir.VirtualHost]] = {}
    shard_by_host: dict[str, int] = {}
    for vhost in vhosts:
        found: set[int] = set()
        for domain in vhost.domains:
            host = host_of(domain)
            shard = shard_by_host.get(host)
            if shard is None:
                shard = shard_by_host[host] = shard_of(host, count)
            found.add(shard)
        for shard in sorted(found):
            members.setdefault(shard, []).append(vhost)
    return members, shard_by_host
