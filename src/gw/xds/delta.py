"""Incremental (delta) xDS: what one type of a delta stream holds, and what to send it.

With delta xDS (`DeltaAggregatedResources`, Envoy's `DELTA_GRPC` ADS) the server sends only
the resources that changed and names the ones removed; the client says which it holds
(`initial_resource_versions` after a reconnect) and subscribes to names as it needs them.
gw's proxies use it (`gw.proxy.bootstrap`): one edited VirtualService among 100,000 is one
route shard and maybe one scope on the wire, where the state of the world resends every
shard.

Per type, a stream keeps the version (content hash) of every resource its client holds
(`known`) and the snapshot that was reconciled last (`synced`). A push looks only at the
names the cache says changed since that snapshot (`NodeSnapshot.changed_since`), plus the
names newly subscribed; when the cache cannot say, it compares every name.

Subscriptions: a first request naming nothing, or `*`, is a wildcard (every resource of
the type: listeners, clusters, scopes); otherwise only the names subscribed are sent.
"""

from __future__ import annotations

from collections.abc import Iterable

from envoy.service.discovery.v3 import discovery_pb2

from gw.xds.cache import NodeSnapshot

WILDCARD = "*"


def subscribe(
    names: set[str] | None,
    known: dict[str, str],
    request: discovery_pb2.DeltaDiscoveryRequest,
    first: bool,
) -> tuple[set[str] | None, set[str]]:
    """The subscription after `request`, and the names to look at again (`known` loses the
    names unsubscribed; on a first request it is what the client says it holds)."""
    added = set(request.resource_names_subscribe)
    gone = set(request.resource_names_unsubscribe)
    if first:
        known.clear()
        known.update(request.initial_resource_versions)
        names = None if not added or WILDCARD in added else set()
    if names is not None:
        if WILDCARD in added:
            names = None
        else:
            names |= added
            names -= gone
    elif WILDCARD in gone:
        names = added - {WILDCARD}
    for name in gone:
        known.pop(name, None)
    return names, added - {WILDCARD}


def response(
    type_url: str,
    names: set[str] | None,
    known: dict[str, str],
    candidates: Iterable[str] | None,
    snapshot: NodeSnapshot,
    nonce: str,
) -> discovery_pb2.DeltaDiscoveryResponse:
    """What the client lacks of `type_url` among `candidates` (None: every name), its
    `known` versions brought up to date. Empty when nothing changed."""
    entries = snapshot.entries.get(type_url, {})
    if candidates is None:
        wanted = entries.keys() if names is None else names
        candidates = {*wanted, *known}
    out = discovery_pb2.DeltaDiscoveryResponse(type_url=type_url, nonce=nonce)
    for name in sorted(candidates):
        entry = entries.get(name) if names is None or name in names else None
        if entry is None:
            if known.pop(name, None) is not None:
                out.removed_resources.append(name)
        elif known.get(name) != entry.digest:
            known[name] = entry.digest
            out.resources.add(name=name, version=entry.digest, resource=entry.resource)
    return out


def candidates(
    synced: NodeSnapshot | None, snapshot: NodeSnapshot, type_url: str, pending: set[str]
) -> set[str] | None:
    """The names that may differ from what the client holds (None: any)."""
    if synced is None:
        return None
    changes = snapshot.changed_since(synced.token)
    if changes is None:
        return None
    return set(changes.get(type_url, ())) | pending
