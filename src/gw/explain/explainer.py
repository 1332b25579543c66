"""`explain()`: one request through one proxy's served configuration, in Envoy's order.

listener and filter chain → connection manager (headers with underscores dropped, the path
normalized, an escaped slash redirected) → virtual host by `Host` → the first route that
matches (the ones before it, and why each did not; the later ones that match too) → the HTTP
filters in chain order, the first to answer ending it (jwt_authn, rbac, ext_authz ...; a
JWT provider that writes claims into headers makes Envoy choose the route again) → the
router: an answer of its own, or the clusters and endpoints the request is forwarded to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.config.route.v3 import route_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)

from gw.explain import filters, listeners
from gw.explain.context import Context
from gw.explain.explanation import Explanation, Outcome, RouteCheck
from gw.explain.manager import map_local_reply, prepare_request
from gw.explain.matching import describe_match, route_check, select_virtual_host
from gw.explain.outcome import header_changes, route_outcome
from gw.explain.paths import PreparedPath, prepare_path
from gw.explain.request import Request
from gw.explain.served import Served
from gw.explain.tcp import tcp_outcome

_UNESCAPE_AND_REDIRECT = hcm_pb2.HttpConnectionManager.UNESCAPE_AND_REDIRECT


def explain(served: Served, request: Request, *, port: int, now: float) -> Explanation:
    """What the proxy serving `served` does with `request` arriving on `port`; `now` is the
    time tokens are checked against (seconds since the epoch)."""
    line = f"{request.method} {request.scheme}://{request.authority}{request.target}"
    conn = listeners.connect(served, request, port)
    if conn.closed is None and conn.manager is None and conn.chain is not None:
        proxied = tcp_outcome(conn.chain, request, served)
        closed = Outcome(action="close", by="listener", reason="the chain runs no HTTP")
        return Explanation(request=line, connection=conn.steps, outcome=proxied or closed)
    if conn.closed is not None or conn.manager is None or conn.routes is None:
        outcome = Outcome(action="close", by="listener", reason=conn.closed or "")
        if conn.routes is None and conn.manager is not None:
            outcome = Outcome(action="respond", by="no route", status=404, body="")
        return Explanation(request=line, connection=conn.steps, outcome=outcome)
    manager = conn.manager
    request, notes = prepare_request(request, manager)
    prepared = prepare_path(
        request.target,
        normalize=manager.normalize_path.value,
        merge_slashes=manager.merge_slashes,
        unescape_and_redirect=manager.path_with_escaped_slashes_action == _UNESCAPE_AND_REDIRECT,
    )
    base = Explanation(
        request=line,
        connection=conn.steps,
        path=prepared.path,
        path_changes=prepared.changes,
        outcome=Outcome(action="respond", by="", status=None),
        notes=tuple(notes),
    )
    if prepared.redirect is not None:
        redirect = Outcome(
            action="respond",
            by="connection manager (escaped slash in the path)",
            status=307,
            body="",
            headers=(("location", prepared.redirect),),
        )
        return _replace(base, outcome=map_local_reply(manager, request, redirect))
    return _route(base, served, conn.routes, manager, request, prepared, now, notes)


def _route(
    base: Explanation,
    served: Served,
    routes: route_pb2.RouteConfiguration,
    manager: hcm_pb2.HttpConnectionManager,
    request: Request,
    prepared: PreparedPath,
    now: float,
    notes: list[str],
) -> Explanation:
    """Virtual host, route, filters (which run even when no route matched), outcome."""
    vhost, why = _select(routes.virtual_hosts, request, manager)
    checks = _checks(vhost.routes, request, prepared, served) if vhost is not None else []
    winner = next((i for i, c in enumerate(checks) if c.matched), None)
    route = vhost.routes[winner] if vhost is not None and winner is not None else None
    ctx = Context(
        request=request, prepared=prepared, route=route, vhost=vhost, route_config=routes, now=now
    )
    steps, stop = filters.walk(manager, ctx)
    if vhost is not None and stop is None and ctx.reselect and ctx.claim_headers:
        rechosen = _rechoose(vhost, request, ctx.claim_headers, prepared, served)
        if rechosen is not None and rechosen[0] != winner:
            winner, checks = rechosen
            route = vhost.routes[winner]
            notes.append("jwt_authn wrote claims into headers: Envoy chose the route again")
    base = _replace(
        base, virtual_host_why=why, earlier=tuple(checks), filters=tuple(steps), notes=tuple(notes)
    )
    if vhost is not None:
        source = served.sources.virtual_hosts.get(vhost.name)
        base = _replace(base, virtual_host=vhost.name, virtual_host_source=source)
        if winner is not None and route is not None:
            base = _replace(
                base,
                route=checks[winner],
                earlier=tuple(checks[:winner]),
                shadowed=tuple(c for c in checks[winner + 1 :] if c.matched),
                header_changes=header_changes(route, vhost),
            )
    if stop is not None:
        outcome = Outcome(
            action="respond" if stop.status is not None else "extauth",
            by=stop.by,
            status=stop.status,
            body=stop.body,
            headers=stop.headers,
            reason=stop.reason,
        )
    elif route is None:
        by = "no virtual host" if vhost is None else "no route"
        outcome = Outcome(action="respond", by=by, status=404, body="")
    else:
        outcome = route_outcome(route, request, prepared, served)
    return _replace(base, outcome=map_local_reply(manager, request, outcome))


def _select(
    vhosts: Sequence[rc_pb2.VirtualHost], request: Request, manager: hcm_pb2.HttpConnectionManager
) -> tuple[rc_pb2.VirtualHost | None, str]:
    ignore_port = manager.strip_any_host_port
    return select_virtual_host(vhosts, request.authority, ignore_port=ignore_port)


def _checks(
    routes: Sequence[rc_pb2.Route], request: Request, prepared: PreparedPath, served: Served
) -> list[RouteCheck]:
    out = []
    for route in routes:
        ok, conditions = route_check(route.match, request, prepared)
        out.append(
            RouteCheck(
                name=route.name,
                matcher=describe_match(route.match),
                matched=ok,
                conditions=tuple((c.ok, c.why) for c in conditions),
                source=served.sources.routes.get(route.name),
            )
        )
    return out


def _rechoose(
    vhost: rc_pb2.VirtualHost,
    request: Request,
    added: list[tuple[str, str]],
    prepared: PreparedPath,
    served: Served,
) -> tuple[int, list[RouteCheck]] | None:
    names = {name for name, _ in added}
    headers = tuple((n, v) for n, v in request.headers if n not in names) + tuple(added)
    again = dataclasses.replace(request, headers=headers)
    checks = _checks(vhost.routes, again, prepared, served)
    winner = next((i for i, c in enumerate(checks) if c.matched), None)
    return None if winner is None else (winner, checks)


def _replace(explanation: Explanation, **changes: object) -> Explanation:
    return dataclasses.replace(explanation, **changes)  # type: ignore[arg-type]
