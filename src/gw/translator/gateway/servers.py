"""gw's own gRPC servers that virtual hosts call (the extauth server, the rate-limit server),
as the Settings name them: one mechanism for every kind.

A kind (`extauth.SERVER`, `ratelimit.SERVER`, listed in `passes.SERVERS`) says which
Settings field names its Upstream and how the rest of its block reads, which fields of a
VirtualService send requests to it, and how an IR virtual host that uses it is pointed at
it. Stage 1 then, for every kind alike:

- resolves the servers before anything uses them (`resolve_servers`): findings on the
  user's Settings, an edge Settings → Upstream;
- rejects a VirtualService that needs a server the Settings do not name (fail closed: no
  silent "unauthenticated" or "unlimited"), and ties the others to the user's Settings
  (with the install's alone, `install.py`, to the server's Upstream), so that what is
  rejected there rejects them too (`check_server_use`);
- attaches the servers to the hosts that use them, and makes their clusters HTTP/2 (gRPC),
  once, while the Proxy is assembled (`Servers.attach`, `Servers.clusters`). Hosts kept
  from a rejected resource's last accepted version get the servers as they are now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from gw import api
from gw.api import ResourceKey
from gw.api.virtualservice import RouteOptions, VirtualHostOptions
from gw.translator import ir
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport


class GrpcServer(Protocol):
    """What every server's IR has: the cluster requests go to (None: none named)."""

    @property
    def cluster(self) -> str | None: ...


S = TypeVar("S", bound=GrpcServer)
#: One options block of a VirtualService: the route's index (None: the host's), the block.
OptionBlock = tuple[int | None, VirtualHostOptions | RouteOptions]
OptionBlocks = Sequence[OptionBlock]


def no_more_uses(blocks: OptionBlocks, server: object) -> list[tuple[str, str | None]]:
    """A kind's `more` when it has no fields of its own besides `needs`."""
    return []


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerKind(Generic[S]):
    #: The Settings field naming the server's Upstream.
    field: str
    #: What a VirtualService that needs the server is told when none is named.
    missing: str
    #: The server from the Settings (None when they have no block for it); findings on
    #: `report` (the Settings'), references resolved through `refs`.
    build: Callable[[api.Settings, Refs, ResourceReport], S | None]
    #: The fields of a VirtualService that send requests to the server, from its options
    #: blocks (`option_blocks`: a kind reads nothing else of it).
    needs: Callable[[OptionBlocks], list[str]]
    #: The host pointed at the server, when it uses it (the same object otherwise).
    attach: Callable[[ir.VirtualHost, S | None], ir.VirtualHost]
    #: Further fields of a VirtualService (of its options blocks) that use the kind's
    #: servers in their own way (the extauth kind's named servers), each with what is wrong
    #: (None: nothing, tied to the Settings like `needs`' fields).
    more: Callable[[OptionBlocks, S | None], list[tuple[str, str | None]]] = no_more_uses
    #: The clusters of the server that speak gRPC (None: its `cluster`).
    grpc_clusters: Callable[[S], frozenset[str]] | None = None


def option_blocks(vs: api.VirtualService) -> Iterator[OptionBlock]:
    """The options blocks `vs` sets, the host's first (index None), then each route's by
    index: what the kinds' `needs` look through. The field path of one is made only for
    the blocks that use a server (`options_field`); most use none."""
    vhost = vs.spec.virtual_host
    if vhost is None:
        return
    if vhost.options is not None:
        yield None, vhost.options
    for i, route in enumerate(vhost.routes):
        if route.options is not None:
            yield i, route.options


def options_field(index: int | None) -> str:
    """The field path of the options block `option_blocks` gave with `index`."""
    if index is None:
        return "spec.virtualHost.options"
    return f"spec.virtualHost.routes[{index}].options"


@dataclass(frozen=True, slots=True)
class Resolved:
    """One kind's server as the Settings name it (None: they name none), and the
    Upstreams its reference resolved to."""

    kind: ServerKind[Any]
    server: GrpcServer | None = None
    upstreams: tuple[ResourceKey, ...] = ()


@dataclass(frozen=True, slots=True)
class Servers:
    """Each kind's server, resolved; and the user's Settings that named them (None when
    there are none: the install's alone, or no Settings at all)."""

    settings: ResourceKey | None = None
    resolved: tuple[Resolved, ...] = ()

    def attach(self, vhost: ir.VirtualHost) -> ir.VirtualHost:
        for r in self.resolved:
            vhost = r.kind.attach(vhost, r.server)
        return vhost

    def clusters(self) -> frozenset[str]:
        """The clusters of the servers: they speak gRPC, so HTTP/2 whatever the Upstream says."""
        out: set[str] = set()
        for r in self.resolved:
            if r.server is not None and r.kind.grpc_clusters is not None:
                out |= r.kind.grpc_clusters(r.server)
            elif r.server is not None and r.server.cluster:
                out.add(r.server.cluster)
        return frozenset(out)


def resolve_servers(
    kinds: tuple[ServerKind[Any], ...],
    settings: api.Settings | None,
    user_settings: ResourceKey | None,
    refs: Refs,
    reports: Reports,
) -> Servers:
    """Each kind's server from `settings` (the Settings read). Findings and references go
    to the user's Settings; the install's own are gw's to get right, and a host that uses
    their servers is tied to the Upstreams directly (`check_server_use`)."""
    if settings is None:
        return Servers(resolved=tuple(Resolved(kind) for kind in kinds))
    report = reports.of(user_settings) if user_settings is not None else ResourceReport()
    resolved = []
    for kind in kinds:
        scoped = refs.scope()
        server = kind.build(settings, scoped, report)
        if user_settings is not None:
            refs.add(scoped.edges)
        resolved.append(Resolved(kind, server, tuple(e.referent for e in scoped.edges)))
    return Servers(settings=user_settings, resolved=tuple(resolved))


#: One kind whose server a VirtualService uses, with its `needs` and `more` fields.
KindUse = tuple[Resolved, list[str], list[tuple[str, str | None]]]


def check_server_use(
    servers: Servers,
    vs: api.VirtualService,
    uses: list[KindUse],
    refs: Refs,
    reports: Reports,
    settings_name: ResourceKey,
) -> None:
    """Reject `vs` when it needs a server no Settings name (`uses`: its `server_uses`); tie
    it otherwise to the user's Settings, or (with the install's alone) to the server's
    Upstream, so that a rejected one rejects it. `settings_name` is the Settings that
    would be read."""
    settings = servers.settings
    where = (
        f"Settings {settings.namespace}.{settings.name}"
        if settings is not None
        else f"the Settings resource ({settings_name.namespace}.{settings_name.name})"
    )
    for r, needed, more in uses:
        missing = f"{r.kind.missing}: set {r.kind.field} in {where}"
        fields = [
            (field, missing if r.server is None or r.server.cluster is None else None)
            for field in needed
        ]
        for field, problem in [*fields, *more]:
            if problem is not None:
                reports.of(vs.key).error(field, problem)
            elif settings is not None:
                refs.link(vs.key, field, settings)
            else:
                for upstream in r.upstreams:
                    refs.link(vs.key, field, upstream)


def server_uses(servers: Servers, vs: api.VirtualService) -> list[KindUse]:
    """The kinds whose servers `vs` uses, each with its `needs` and `more` fields (empty
    for nearly every VirtualService: then `check_server_use` has nothing to do; one that
    sets no options uses none)."""
    blocks = list(option_blocks(vs))
    if not blocks:
        return []
    out = []
    for r in servers.resolved:
        needed, more = r.kind.needs(blocks), r.kind.more(blocks, r.server)
        if needed or more:
            out.append((r, needed, more))
    return out
