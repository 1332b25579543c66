"""The route tree: per host (virtual host of a VirtualService), its routes in the order
Envoy tries them, nested under the delegating routes and RouteTables that led to them, down
to the upstreams each forwards to, every resource with its status.

Built from what the proxy is served (`gw.explain.served.Served`: the Envoy route
configurations and where each route and cluster was written), so that the tree shows what
answers requests, not what the manifests say; a VirtualService that serves nothing (never
accepted, or no virtual host) is listed apart with its status.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from envoy.config.route.v3 import route_components_pb2 as rc_pb2

from gw.explain.explanation import Destination
from gw.explain.listeners import chain_terminates_tls, listener_address, manager_of
from gw.explain.matching import describe_match
from gw.explain.outcome import forwarded_to
from gw.explain.served import Origin, Served

#: "Kind namespace.name" → (state, reason).
Statuses = Mapping[str, tuple[str, str]]
#: Body characters shown of a direct response.
BODY_SHOWN = 60
#: Hosts shown at most; a filter finds the others.
SHOWN = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    """A resource as the tree shows it: its name and status."""

    name: str
    state: str | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteLeaf:
    """One served route."""

    name: str
    matcher: str
    #: Where it was written: field path, file and line.
    written: str
    #: `forward`, `respond` or `redirect`.
    action: str
    #: A path the route matches (its prefix or exact path; "" for a regex), for explain.
    path: str = ""
    detail: str = ""
    destinations: tuple[tuple[Destination, Resource | None], ...] = ()


@dataclass(slots=True, kw_only=True)
class Delegation:
    """A delegating route (`via`, in its parent resource) and the routes of the resource it
    delegates to."""

    via: str
    target: Resource
    children: list[RouteLeaf | Delegation] = field(default_factory=list)


@dataclass(slots=True, kw_only=True)
class Host:
    name: str
    resource: Resource
    domains: tuple[str, ...]
    listeners: tuple[str, ...]
    #: `https` when its listener terminates TLS; with `example_host`, what explain is
    #: given for a route of it (None: only wildcard domains).
    scheme: str = "http"
    example_host: str | None = None
    children: list[RouteLeaf | Delegation] = field(default_factory=list)


def resource(name: str | None, statuses: Statuses) -> Resource | None:
    if not name:
        return None
    state, reason = statuses.get(name, (None, ""))
    return Resource(name=name, state=state, reason=reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class Tree:
    #: The hosts shown (at most `SHOWN` of those that matched the filter).
    hosts: tuple[Host, ...]
    #: Hosts that matched the filter.
    matched: int
    #: Every resource a served host came from (filter or not).
    served: frozenset[str]


def build_tree(served: Served, statuses: Statuses, *, text: str = "", shown: int = SHOWN) -> Tree:
    """The virtual hosts served, in listener order (a host on two listeners once); with
    `text`, those whose resource, name or a domain holds it (case-insensitive)."""
    listeners_of, tls_configs = _listeners_of_route_configs(served)
    needle = text.strip().lower()
    hosts: dict[str, Host] = {}
    resources: set[str] = set()
    for config_name in sorted(served.routes, key=lambda n: (listeners_of.get(n, ()), n)):
        on = tuple(listeners_of.get(config_name, ()))
        for vhost in served.routes[config_name].virtual_hosts:
            origin = served.sources.virtual_hosts.get(vhost.name)
            name = origin.resource if origin else vhost.name
            resources.add(name)
            known = hosts.get(vhost.name)
            if known is not None:
                known.listeners = tuple(dict.fromkeys((*known.listeners, *on)))
                continue
            searched = "\n".join((name, vhost.name, *vhost.domains)).lower()
            if needle and needle not in searched:
                continue
            domains = shown_domains(vhost.domains)
            host = Host(
                name=vhost.name,
                resource=resource(name, statuses) or Resource(name=name),
                domains=domains,
                listeners=on,
                scheme="https" if config_name in tls_configs else "http",
                example_host=next((d for d in domains if "*" not in d), None),
            )
            if len(hosts) < shown:
                for route in vhost.routes:
                    _insert(host.children, route, served, statuses)
            hosts[vhost.name] = host
    return Tree(
        hosts=tuple(list(hosts.values())[:shown]),
        matched=len(hosts),
        served=frozenset(resources),
    )


def not_served(tree: Tree, statuses: Statuses) -> list[Resource]:
    """VirtualServices with a status but no virtual host served (rejected before any
    version was accepted, or no virtual host at all)."""
    return [
        Resource(name=name, state=state, reason=reason)
        for name, (state, reason) in sorted(statuses.items())
        if name.startswith("VirtualService ") and name not in tree.served
    ]


def shown_domains(domains: Sequence[str]) -> tuple[str, ...]:
    """The domains as written: gw's `host:*` twins (matching a Host with a port) left out."""
    written = set(domains)
    return tuple(d for d in domains if not (d.endswith(":*") and d[:-2] in written))


def _insert(
    children: list[RouteLeaf | Delegation], route: rc_pb2.Route, served: Served, statuses: Statuses
) -> None:
    source = served.sources.routes.get(route.name)
    chain: tuple[Origin, ...] = source.delegated_by if source else ()
    final = source.origin if source else None
    level = children
    for index, step in enumerate(chain):
        following = chain[index + 1] if index + 1 < len(chain) else final
        via = f"{step.resource} {_where(step)}"
        found = next((c for c in level if isinstance(c, Delegation) and c.via == via), None)
        if found is None:
            name = following.resource if following else "?"
            found = Delegation(via=via, target=resource(name, statuses) or Resource(name=name))
            level.append(found)
        level = found.children
    level.append(_leaf(route, final, served, statuses))


def _leaf(
    route: rc_pb2.Route, origin: Origin | None, served: Served, statuses: Statuses
) -> RouteLeaf:
    written = _where(origin) if origin else "(written by gw)"
    path = route.match.prefix or route.match.path
    common = {
        "name": route.name,
        "matcher": describe_match(route.match),
        "written": written,
        "path": path or ("" if route.match.HasField("safe_regex") else "/"),
    }
    kind = route.WhichOneof("action")
    if kind == "direct_response":
        body = route.direct_response.body.inline_string
        shown = body if len(body) <= BODY_SHOWN else body[:BODY_SHOWN] + "…"
        detail = f"{route.direct_response.status}" + (f" {shown!r}" if body else "")
        return RouteLeaf(action="respond", detail=detail, **common)
    if kind == "redirect":
        return RouteLeaf(action="redirect", detail=_redirect(route.redirect), **common)
    if kind != "route":
        return RouteLeaf(action=kind or "none", **common)
    destinations = tuple(
        (d, resource(d.upstream, statuses)) for d in forwarded_to(route.route, served)
    )
    return RouteLeaf(action="forward", destinations=destinations, **common)


def _redirect(redirect: rc_pb2.RedirectAction) -> str:
    parts = ["https" if redirect.https_redirect else ""]
    parts.append(f"host {redirect.host_redirect}" if redirect.host_redirect else "")
    parts.append(f"path {redirect.path_redirect}" if redirect.path_redirect else "")
    parts.append(f"prefix {redirect.prefix_rewrite}" if redirect.prefix_rewrite else "")
    return ", ".join(p for p in parts if p) or "same URL"


def _where(origin: Origin) -> str:
    line = f":{origin.line}" if origin.line else ""
    return f"{origin.field} ({origin.file}{line})" if origin.file else origin.field


def _listeners_of_route_configs(served: Served) -> tuple[dict[str, list[str]], set[str]]:
    """Route configuration name → the listeners (`address:port`) whose chains use it; and
    the route configurations of chains that terminate TLS."""
    out: dict[str, list[str]] = {}
    tls: set[str] = set()
    for listener in served.listeners:
        for chain in listener.filter_chains:
            manager = manager_of(chain)
            if manager is None or not manager.HasField("rds"):
                continue
            name = manager.rds.route_config_name
            at = out.setdefault(name, [])
            if listener_address(listener) not in at:
                at.append(listener_address(listener))
            if chain_terminates_tls(chain):
                tls.add(name)
    return out, tls
