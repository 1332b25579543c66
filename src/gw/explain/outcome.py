"""What the router does with a request once every filter let it through: answer it
(`direct_response`, `redirect`), or forward it to a cluster (one, or several by weight) and
one of the cluster's endpoints.

A cluster the route names (or a request header names, `cluster_header`) but that is not
served answers 503 with an empty body; a cluster whose load balancer has nothing to pick
from (`endpoints.pick`: no healthy endpoint, or a hashing balancer whose localities have no
weight) answers 503 `no healthy upstream`: both as Envoy does. The dynamic forward proxy's
cluster connects to the host the request (or the route) names, resolved by DNS. Otherwise
the upstream answers, and explain says which endpoints may be asked and with what path.
"""

from __future__ import annotations

from envoy.config.cluster.v3 import cluster_pb2
from envoy.config.endpoint.v3 import endpoint_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.filters.http.dynamic_forward_proxy.v3 import (
    dynamic_forward_proxy_pb2 as dfp_pb2,
)

from gw.explain.endpoints import NO_HEALTHY_UPSTREAM, pick
from gw.explain.explanation import Destination, Outcome
from gw.explain.paths import PreparedPath
from gw.explain.request import Request
from gw.explain.served import Served
from gw.explain.traffic import upstream_host
from gw.translator.envoy.azure import SECRET_HEADERS
from gw.translator.regex import compile_like_envoy

DYNAMIC_FORWARD_PROXY = "envoy.clusters.dynamic_forward_proxy"
_REDIRECT_CODES = {
    rc_pb2.RedirectAction.MOVED_PERMANENTLY: 301,
    rc_pb2.RedirectAction.FOUND: 302,
    rc_pb2.RedirectAction.SEE_OTHER: 303,
    rc_pb2.RedirectAction.TEMPORARY_REDIRECT: 307,
    rc_pb2.RedirectAction.PERMANENT_REDIRECT: 308,
}


def route_outcome(
    route: rc_pb2.Route, request: Request, prepared: PreparedPath, served: Served
) -> Outcome:
    action = route.WhichOneof("action")
    if action == "direct_response":
        body = route.direct_response.body
        text = body.inline_string or body.inline_bytes.decode("utf-8", "replace") or None
        if body.filename:
            text = f"(the content of {body.filename})"
        return Outcome(
            action="respond",
            by="route (direct response)",
            status=route.direct_response.status,
            body=text,
        )
    if action == "redirect":
        return _redirect(route, request, prepared)
    if action == "route":
        return _forward(route, request, prepared, served)
    return Outcome(action="respond", by="route", status=None, reason=f"{action}: not evaluated")


def _redirect(route: rc_pb2.Route, request: Request, prepared: PreparedPath) -> Outcome:
    """The `location` as Envoy writes it: `host_redirect` replaces the host and its port;
    a scheme change drops the old scheme's default port only."""
    redirect = route.redirect
    scheme = "https" if redirect.https_redirect else redirect.scheme_redirect or request.scheme
    host, port = _split_authority(request.authority)
    if redirect.host_redirect:
        host, port = redirect.host_redirect, ""
    if redirect.port_redirect:
        port = str(redirect.port_redirect)
    elif scheme != request.scheme and port == {"http": "80", "https": "443"}.get(request.scheme):
        port = ""
    path = prepared.path
    if redirect.path_redirect:
        path = redirect.path_redirect
    elif redirect.prefix_rewrite:
        path = _rewrite_prefix(route.match, path, redirect.prefix_rewrite)
    query = "" if redirect.strip_query or not prepared.query else f"?{prepared.query}"
    authority = f"{host}:{port}" if port else host
    return Outcome(
        action="respond",
        by="route (redirect)",
        status=_REDIRECT_CODES.get(redirect.response_code, 301),
        body="",
        headers=(("location", f"{scheme}://{authority}{path}{query}"),),
    )


def _split_authority(authority: str) -> tuple[str, str]:
    if authority.startswith("["):
        host, _, rest = authority.partition("]")
        return host + "]", rest.removeprefix(":")
    host, _, port = authority.partition(":")
    return host, port


def _forward(
    route: rc_pb2.Route, request: Request, prepared: PreparedPath, served: Served
) -> Outcome:
    action = route.route
    destinations = forwarded_to(action, served, request, _dns_target(route, request))
    path = prepared.path
    if action.prefix_rewrite:
        path = _rewrite_prefix(route.match, path, action.prefix_rewrite)
    elif action.HasField("regex_rewrite"):
        rewrite = action.regex_rewrite
        path = (
            compile_like_envoy(rewrite.pattern.regex)
            .subn(rewrite.substitution.encode(), path.encode())[0]
            .decode()
        )
    query = f"?{prepared.query}" if prepared.query else ""
    host = request.authority
    if action.host_rewrite_literal:
        host = action.host_rewrite_literal
    elif action.HasField("auto_host_rewrite") and action.auto_host_rewrite.value:
        host = "the endpoint's host name"
    usable = [d for d in destinations if d.endpoints and not d.note]
    if not usable:
        missing = all(d.note.startswith("not served") for d in destinations)
        return Outcome(
            action="respond",
            by="router",
            status=503,
            body="" if missing else NO_HEALTHY_UPSTREAM,
            destinations=tuple(destinations),
            reason="; ".join(dict.fromkeys(d.note for d in destinations if d.note)),
        )
    return Outcome(
        action="forward",
        by="router",
        destinations=tuple(destinations),
        upstream_path=path + query,
        upstream_host=host,
    )


def forwarded_to(
    action: rc_pb2.RouteAction,
    served: Served,
    request: Request | None = None,
    dns_host: str = "",
) -> list[Destination]:
    """The clusters a route action forwards to, with their weights, shares and endpoints;
    for a request (`request`) the cluster its header names, and where the dynamic forward
    proxy's cluster would connect (`dns_host`). Without a request (the console's route
    tree), a cluster named by a header is shown as none."""
    if action.HasField("weighted_clusters"):
        weighted = [(c.name, c.weight.value) for c in action.weighted_clusters.clusters]
    elif action.cluster_header:
        sent = request.values(action.cluster_header) if request is not None else ()
        weighted = [(sent[0] if sent else "", 1)]
    else:
        weighted = [(action.cluster, 1)]
    total = sum(w for _, w in weighted) or 1
    return [
        _destination(name, weight, weight * 100 / total, served, dns_host)
        for name, weight in weighted
    ]


def cluster_destination(name: str, weight: int, share: float, served: Served) -> Destination:
    """Cluster `name` with its healthy endpoints (or why it has none), as a destination."""
    return _destination(name, weight, share, served, "")


def _destination(
    name: str, weight: int, share: float, served: Served, dns_host: str
) -> Destination:
    upstream = served.sources.clusters.get(name)
    cluster = served.clusters.get(name)
    if cluster is None:
        return Destination(
            cluster=name or "(no cluster named)",
            weight=weight,
            share=round(share, 2),
            endpoints=(),
            upstream=upstream,
            note="not served: Envoy answers 503",
        )
    if cluster.cluster_type.name == DYNAMIC_FORWARD_PROXY:
        return Destination(
            cluster=name, weight=weight, share=round(share, 2), endpoints=(dns_host,)
        )
    picked = pick(cluster, _assignment(cluster, served))
    note = ""
    if picked.empty_because:
        note = f"{picked.empty_because}: Envoy answers 503 {NO_HEALTHY_UPSTREAM}"
    return Destination(
        cluster=name,
        weight=weight,
        share=round(share, 2),
        endpoints=picked.endpoints,
        failover=picked.failover,
        resolved_by_dns=picked.resolved_by_dns,
        upstream=upstream,
        note=note,
    )


def _dns_target(route: rc_pb2.Route, request: Request) -> str:
    """Where the dynamic forward proxy would connect for this route (`host:port`)."""
    per_route = None
    for config in route.typed_per_filter_config.values():
        if config.type_url.endswith(".dynamic_forward_proxy.v3.PerRouteConfig"):
            per_route = dfp_pb2.PerRouteConfig()
            config.Unpack(per_route)
    host = upstream_host(per_route, request.values, request.authority)
    _, port = _split_authority(host)
    return host if port else f"{host}:80"


def _assignment(
    cluster: cluster_pb2.Cluster, served: Served
) -> endpoint_pb2.ClusterLoadAssignment | None:
    if cluster.type == cluster_pb2.Cluster.EDS:
        return served.endpoints.get(cluster.eds_cluster_config.service_name or cluster.name)
    return cluster.load_assignment if cluster.HasField("load_assignment") else None


def _rewrite_prefix(match: rc_pb2.RouteMatch, path: str, rewrite: str) -> str:
    """Envoy's prefix rewrite: the matched prefix (or the whole exact path) is replaced."""
    kind = match.WhichOneof("path_specifier")
    matched = match.prefix if kind == "prefix" else match.path if kind == "path" else ""
    return rewrite + path[len(matched) :]


def header_changes(route: rc_pb2.Route, vhost: rc_pb2.VirtualHost) -> tuple[str, ...]:
    """The request and response header changes of the route, then its virtual host's."""
    out = []
    for where, holder in (("route", route), ("virtual host", vhost)):
        for option in holder.request_headers_to_add:
            value = _shown(option.header.key, option.header.value)
            out.append(f"{where}: request header {option.header.key}: {value}")
        out += [f"{where}: removes request header {h}" for h in holder.request_headers_to_remove]
        for option in holder.response_headers_to_add:
            out.append(f"{where}: response header {option.header.key}: {option.header.value}")
        out += [f"{where}: removes response header {h}" for h in holder.response_headers_to_remove]
    return tuple(out)


def _shown(name: str, value: str) -> str:
    """A header's value, unless it is a secret (an Azure function key)."""
    return "<redacted>" if name.lower() in SECRET_HEADERS else value
