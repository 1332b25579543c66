"""IR virtual hosts and routes → Envoy virtual hosts and routes (`builder.py` puts them in
route configurations: one per plain listener, or its shards, and one per virtual host (filter
chain) on a TLS listener)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.config.route.v3 import route_pb2
from envoy.type.matcher.v3 import regex_pb2, string_pb2
from google.protobuf import duration_pb2, wrappers_pb2

from gw.translator import ir
from gw.translator.envoy import extauth_http, names, tls
from gw.translator.envoy.aws import AWS_LAMBDA, lambda_config
from gw.translator.envoy.azure import add_function_call
from gw.translator.envoy.destinations import add_destination_traffic
from gw.translator.envoy.dynamicforwardproxy import retarget
from gw.translator.envoy.filters import ROUTE_CONFIGURING
from gw.translator.envoy.headers import add_header_manipulation
from gw.translator.envoy.loadbalancer import hash_policy, subset_match
from gw.translator.envoy.packing import pack
from gw.translator.envoy.retries import add_retry_extras
from gw.translator.envoy.rewrite import regex_substitution
from gw.translator.envoy.traffic import add_host_traffic, add_route_traffic
from gw.translator.envoy.transform_script import span_name
from gw.translator.envoy.xds import length_delimited


class VirtualHostProtos:
    """Envoy virtual hosts built from IR ones, reused while the IR object is the very same
    (stage 1's host cache hands back the same object for an unchanged VirtualService).
    Made from the previous translation's instance; never shared across translations."""

    def __init__(self, previous: VirtualHostProtos | None = None) -> None:
        self._previous = previous._built if previous is not None else {}
        self._built: dict[int, tuple[ir.VirtualHost, rc_pb2.VirtualHost]] = {}

    def build(self, vhost: ir.VirtualHost) -> rc_pb2.VirtualHost:
        known = self._previous.get(id(vhost))
        proto = known[1] if known is not None and known[0] is vhost else build_virtual_host(vhost)
        self._built[id(vhost)] = (vhost, proto)
        return proto


def build_route_configurations(
    listener: ir.Listener, protos: VirtualHostProtos | None = None
) -> list[route_pb2.RouteConfiguration]:
    protos = protos or VirtualHostProtos()
    if listener.tcp is not None or listener.matched:  # each HTTP part's own, if any
        parts = [m.http for m in listener.matched if m.http is not None]
        return [rc for part in parts for rc in build_route_configurations(part, protos)]
    options = listener.route_options
    if tls.is_tls(listener):
        return retarget(
            [
                build_route_configuration(tls.route_config_name(listener, v), (v,), protos, options)
                for v in listener.virtual_hosts
            ],
            listener,
        )
    name = listener.route_config_name
    return retarget(
        [build_route_configuration(name, listener.virtual_hosts, protos, options)], listener
    )


def build_route_configuration(
    name: str,
    vhosts: Sequence[ir.VirtualHost],
    protos: VirtualHostProtos | None = None,
    options: ir.RouteConfigOptions | None = None,
) -> route_pb2.RouteConfiguration:
    protos = protos or VirtualHostProtos()
    return route_configuration(name, [protos.build(v) for v in vhosts], options)


def route_configuration(
    name: str,
    vhosts: Sequence[rc_pb2.VirtualHost],
    options: ir.RouteConfigOptions | None = None,
) -> route_pb2.RouteConfiguration:
    """A route configuration of Envoy virtual hosts already built."""
    out = route_pb2.RouteConfiguration(
        name=name,
        virtual_hosts=vhosts,
        # Routes to a cluster that does not exist answer 503 instead of blocking the update.
        validate_clusters=wrappers_pb2.BoolValue(value=False),
    )
    if options is not None:
        if options.max_direct_response_body_bytes is not None:
            out.max_direct_response_body_size_bytes.value = options.max_direct_response_body_bytes
        out.most_specific_header_mutations_wins = options.most_specific_header_mutations_wins
    return out


def route_configuration_wire(
    name: str, vhosts: Sequence[bytes], options: ir.RouteConfigOptions | None = None
) -> bytes:
    """`route_configuration` of virtual hosts already serialized, serialized: the same
    bytes, without parsing them (protobuf writes fields in the order of their numbers, the
    name first, then the virtual hosts, then the rest)."""
    rest = route_configuration("", (), options).SerializeToString(deterministic=True)
    head = (length_delimited(_NAME, name.encode()),) if name else ()
    return b"".join((*head, *(length_delimited(_VIRTUAL_HOSTS, v) for v in vhosts), rest))


_NAME = route_pb2.RouteConfiguration.NAME_FIELD_NUMBER
_VIRTUAL_HOSTS = route_pb2.RouteConfiguration.VIRTUAL_HOSTS_FIELD_NUMBER


def build_virtual_host(vhost: ir.VirtualHost, *, asks_filters: bool = True) -> rc_pb2.VirtualHost:
    """`vhost`'s message. `asks_filters=False` (the builder knows it of the host:
    `HostFacts.asks_filters`) writes only names, matches and destinations, which is all
    such a host has."""
    out = rc_pb2.VirtualHost(name=vhost.name, domains=vhost.domains)
    if not asks_filters:
        for route in vhost.routes:
            _fill_forward(out.routes.add(), route)
        return out
    for route in vhost.routes:
        _fill_route(out.routes.add(), vhost, route)
    add_header_manipulation(out, vhost.headers)
    add_host_traffic(out, vhost)
    if vhost.retries is not None:
        out.retry_policy.CopyFrom(_retry_policy(vhost.retries))
    for http_filter in ROUTE_CONFIGURING:
        config = http_filter.per_virtual_host(vhost)
        if config is not None:
            out.typed_per_filter_config[http_filter.name].CopyFrom(pack(config))
    return out


def _fill_route(out: rc_pb2.Route, vhost: ir.VirtualHost, route: ir.Route) -> None:
    """`route` of `vhost` written into `out` (in place, as `_fill_match`)."""
    out.name = route.name
    _fill_match(out.match, route.match)
    if route.stat_prefix is not None:
        out.stat_prefix = route.stat_prefix
    action = route.action
    if isinstance(action, ir.Forward):
        _fill_route_action(out.route, action)
        _weighted_cluster_configs(vhost, route, out.route)
        if route.retries is not None:
            out.route.retry_policy.CopyFrom(_retry_policy(route.retries))
    elif isinstance(action, ir.DirectResponse):
        out.direct_response.status = action.status
        if action.body is not None:
            out.direct_response.body.inline_string = action.body
    else:
        out.redirect.CopyFrom(_redirect(action))
    add_route_traffic(out, route)
    add_header_manipulation(out, route.headers)
    if isinstance(action, ir.Forward):
        add_function_call(out, action)
    if (span := span_name(vhost, route)) is not None:
        out.decorator.operation = span
    if (checked := extauth_http.route_metadata(vhost, route)) is not None:
        out.metadata.filter_metadata[extauth_http.METADATA_NAMESPACE].CopyFrom(checked)
    for http_filter in ROUTE_CONFIGURING:
        config = http_filter.per_route(vhost, route)
        if config is not None:
            out.typed_per_filter_config[http_filter.name].CopyFrom(pack(config))


def _fill_forward(out: rc_pb2.Route, route: ir.Route) -> None:
    """`route`, which sets no option and forwards, written into `out`: what `_fill_route`
    writes of it, without asking each option and filter for nothing."""
    out.name = route.name
    _fill_match(out.match, route.match)
    _fill_route_action(out.route, cast(ir.Forward, route.action))


def _weighted_cluster_configs(
    vhost: ir.VirtualHost, route: ir.Route, action: rc_pb2.RouteAction
) -> None:
    """Per-filter configs of weighted clusters (filters that have `per_weighted_cluster`)."""
    if not isinstance(route.action, ir.Forward) or len(route.action.clusters) < 2:
        return
    if all(c.transformations is None for c in route.action.clusters):
        return
    for cluster, out in zip(route.action.clusters, action.weighted_clusters.clusters, strict=True):
        for http_filter in ROUTE_CONFIGURING:
            per_cluster = getattr(http_filter, "per_weighted_cluster", None)
            config = per_cluster(vhost, route, cluster) if per_cluster is not None else None
            if config is not None:
                out.typed_per_filter_config[http_filter.name].CopyFrom(pack(config))


def _fill_match(out: rc_pb2.RouteMatch, match: ir.RouteMatch) -> None:
    """`match` written into `out` (built in place: a message made apart and copied in costs
    as much again)."""
    if match.path_kind == "prefix":
        out.prefix = match.path
    elif match.path_kind == "connect":
        out.connect_matcher.SetInParent()
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


def _fill_route_action(out: rc_pb2.RouteAction, action: ir.Forward) -> None:
    """`action` written into `out` (in place, as `_fill_match`)."""
    if action.cluster_header is not None:
        out.cluster_header = action.cluster_header
    elif action.dynamic_forward_proxy is not None:
        out.cluster = names.DYNAMIC_FORWARD_PROXY_CLUSTER
    elif len(action.clusters) == 1 and action.clusters[0].traffic is None:
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
    else:
        _cluster_host_rewrites(out, action)


def _cluster_host_rewrites(out: rc_pb2.RouteAction, action: ir.Forward) -> None:
    """The Host each cluster's service needs, when the route rewrites none itself."""
    if len(action.clusters) == 1:
        if action.clusters[0].host_rewrite is not None:
            out.host_rewrite_literal = action.clusters[0].host_rewrite
        return
    for weight, target in zip(out.weighted_clusters.clusters, action.clusters, strict=True):
        if target.host_rewrite is not None:
            weight.host_rewrite_literal = target.host_rewrite


def _cluster_weight(target: ir.WeightedCluster) -> rc_pb2.WeightedCluster.ClusterWeight:
    out = rc_pb2.WeightedCluster.ClusterWeight(
        name=target.cluster, weight=wrappers_pb2.UInt32Value(value=target.weight)
    )
    match = subset_match(target.subset)
    if match is not None:
        out.metadata_match.CopyFrom(match)
    if target.aws_lambda is not None:
        out.typed_per_filter_config[AWS_LAMBDA].CopyFrom(pack(lambda_config(target.aws_lambda)))
    add_destination_traffic(out, target)
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
    add_retry_extras(out, policy)
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
    elif action.regex_rewrite is not None:
        out.regex_rewrite.CopyFrom(regex_substitution(action.regex_rewrite))
    if action.https:
        out.https_redirect = True
    if action.port is not None:
        out.port_redirect = action.port
    return out
