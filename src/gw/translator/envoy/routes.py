"""IR virtual hosts and routes → Envoy virtual hosts and routes (`builder.py` puts them in
route configurations: one per plain listener, or its shards, and one per virtual host (filter
chain) on a TLS listener)."""

from __future__ import annotations

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from google.protobuf import duration_pb2, wrappers_pb2

from gw.translator import ir
from gw.translator.envoy.aws import AWS_LAMBDA, lambda_config
from gw.translator.envoy.filters import HTTP_FILTERS
from gw.translator.envoy.headers import add_header_manipulation
from gw.translator.envoy.loadbalancer import hash_policy, subset_match
from gw.translator.envoy.packing import pack
from gw.translator.envoy.transform_script import span_name


def build_virtual_host(vhost: ir.VirtualHost) -> rc_pb2.VirtualHost:
    out = rc_pb2.VirtualHost(
        name=vhost.name,
        domains=list(vhost.domains),
        routes=[build_route(vhost, r) for r in vhost.routes],
    )
    add_header_manipulation(out, vhost.headers)
    if vhost.retries is not None:
        out.retry_policy.CopyFrom(_retry_policy(vhost.retries))
    for http_filter in HTTP_FILTERS:
        config = http_filter.per_virtual_host(vhost)
        if config is not None:
            out.typed_per_filter_config[http_filter.name].CopyFrom(pack(config))
    return out


def build_route(vhost: ir.VirtualHost, route: ir.Route) -> rc_pb2.Route:
    out = rc_pb2.Route(name=route.name, match=build_match(route.match))
    if route.stat_prefix is not None:
        out.stat_prefix = route.stat_prefix
    action = route.action
    if isinstance(action, ir.Forward):
        out.route.CopyFrom(_route_action(action))
        _weighted_cluster_configs(vhost, route, out.route)
        if route.retries is not None:
            out.route.retry_policy.CopyFrom(_retry_policy(route.retries))
    elif isinstance(action, ir.DirectResponse):
        out.direct_response.status = action.status
        if action.body is not None:
            out.direct_response.body.inline_string = action.body
    else:
        out.redirect.CopyFrom(_redirect(action))
    add_header_manipulation(out, route.headers)
    if (span := span_name(vhost, route)) is not None:
        out.decorator.operation = span
    for http_filter in HTTP_FILTERS:
        config = http_filter.per_route(vhost, route)
        if config is not None:
            out.typed_per_filter_config[http_filter.name].CopyFrom(pack(config))
    return out


def _weighted_cluster_configs(
    vhost: ir.VirtualHost, route: ir.Route, action: rc_pb2.RouteAction
) -> None:
    """Per-filter configs of weighted clusters (filters that have `per_weighted_cluster`)."""
    if not isinstance(route.action, ir.Forward) or len(route.action.clusters) < 2:
        return
    if all(c.transformations is None for c in route.action.clusters):
        return
    for cluster, out in zip(route.action.clusters, action.weighted_clusters.clusters, strict=True):
        for http_filter in HTTP_FILTERS:
            per_cluster = getattr(http_filter, "per_weighted_cluster", None)
            config = per_cluster(vhost, route, cluster) if per_cluster is not None else None
            if config is not None:
                out.typed_per_filter_config[http_filter.name].CopyFrom(pack(config))


def build_match(match: ir.RouteMatch) -> rc_pb2.RouteMatch:
    out = rc_pb2.RouteMatch()
    if match.path_kind == "prefix":
        out.prefix = match.path
    elif match.path_kind == "exact":
        out.path = match.path
    else:
        out.safe_regex.CopyFrom(regex_pb2.RegexMatcher(regex=match.path))
    if not match.case_sensitive:
        out.case_sensitive.CopyFrom(wrappers_pb2.BoolValue(value=False))
    for header in match.headers:
        out.headers.append(_header_matcher(header))
    if match.methods:
        pattern = "|".join(match.methods)
        out.headers.append(
            rc_pb2.HeaderMatcher(
                name=":method",
                string_match=string_pb2.StringMatcher(
                    safe_regex=regex_pb2.RegexMatcher(regex=pattern)
                ),
            )
        )
    for query in match.query:
        out.query_parameters.append(_query_matcher(query))
    return out


def _header_matcher(header: ir.HeaderMatch) -> rc_pb2.HeaderMatcher:
    out = rc_pb2.HeaderMatcher(name=header.name, invert_match=header.invert)
    if not header.value:
        out.present_match = True
    elif header.regex:
        out.string_match.safe_regex.regex = header.value
    else:
        out.string_match.exact = header.value
    return out


def _query_matcher(query: ir.QueryMatch) -> rc_pb2.QueryParameterMatcher:
    out = rc_pb2.QueryParameterMatcher(name=query.name)
    if not query.value:
        out.present_match = True
    elif query.regex:
        out.string_match.safe_regex.regex = query.value
    else:
        out.string_match.exact = query.value
    return out


def _route_action(action: ir.Forward) -> rc_pb2.RouteAction:
    out = rc_pb2.RouteAction()
    if len(action.clusters) == 1:
        out.cluster = action.clusters[0].cluster
        match = subset_match(action.clusters[0].subset)
        if match is not None:
            out.metadata_match.CopyFrom(match)
    else:
        out.weighted_clusters.clusters.extend(_cluster_weight(c) for c in action.clusters)
    out.hash_policy.extend(hash_policy(p) for p in action.hash_policies or ())
    if action.prefix_rewrite is not None:
        out.prefix_rewrite = action.prefix_rewrite
    if action.timeout_ms is not None:
        out.timeout.CopyFrom(
            duration_pb2.Duration(
                seconds=action.timeout_ms // 1000, nanos=(action.timeout_ms % 1000) * 1_000_000
            )
        )
    if action.host_rewrite is not None:
        out.host_rewrite_literal = action.host_rewrite
    elif action.auto_host_rewrite:
        out.auto_host_rewrite.CopyFrom(wrappers_pb2.BoolValue(value=True))
    return out


def _cluster_weight(target: ir.WeightedCluster) -> rc_pb2.WeightedCluster.ClusterWeight:
    out = rc_pb2.WeightedCluster.ClusterWeight(
        name=target.cluster, weight=wrappers_pb2.UInt32Value(value=target.weight)
    )
    match = subset_match(target.subset)
    if match is not None:
        out.metadata_match.CopyFrom(match)
    if target.aws_lambda is not None:
        out.typed_per_filter_config[AWS_LAMBDA].CopyFrom(pack(lambda_config(target.aws_lambda)))
    return out


def _retry_policy(policy: ir.RetryPolicy) -> rc_pb2.RetryPolicy:
    out = rc_pb2.RetryPolicy(
        retry_on=policy.retry_on, retriable_status_codes=list(policy.retriable_status_codes)
    )
    if policy.num_retries is not None:
        out.num_retries.value = policy.num_retries
    if policy.per_try_timeout_ms is not None:
        out.per_try_timeout.CopyFrom(_duration(policy.per_try_timeout_ms))
    if policy.base_interval_ms is not None:
        out.retry_back_off.base_interval.CopyFrom(_duration(policy.base_interval_ms))
        if policy.max_interval_ms is not None:
            out.retry_back_off.max_interval.CopyFrom(_duration(policy.max_interval_ms))
    return out


def _duration(ms: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=ms // 1000, nanos=(ms % 1000) * 1_000_000)


def _redirect(action: ir.Redirect) -> rc_pb2.RedirectAction:
    codes = {
        301: rc_pb2.RedirectAction.MOVED_PERMANENTLY,
        302: rc_pb2.RedirectAction.FOUND,
        303: rc_pb2.RedirectAction.SEE_OTHER,
        307: rc_pb2.RedirectAction.TEMPORARY_REDIRECT,
        308: rc_pb2.RedirectAction.PERMANENT_REDIRECT,
    }
    out = rc_pb2.RedirectAction(
        response_code=codes[action.response_code], strip_query=action.strip_query
    )
    if action.host is not None:
        out.host_redirect = action.host
    if action.path is not None:
        out.path_redirect = action.path
    elif action.prefix_rewrite is not None:
        out.prefix_rewrite = action.prefix_rewrite
    if action.https:
        out.https_redirect = True
    if action.port is not None:
        out.port_redirect = action.port
    return out
