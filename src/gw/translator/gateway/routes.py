"""Routes of a virtual host → IR routes, in declared order (the first match wins).

Each matcher of a route becomes its own IR route (matchers are OR-ed); a route without
matchers matches everything, like `prefix: /`. Destinations are resolved through `Refs`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import sys

from gw import api
from gw.api import ResourceKey, ResourceRef
from gw.api.duration import duration_ms
from gw.api.virtualservice import MAX_TOTAL_WEIGHT, Destination, Matcher, Route, RouteOptions
from gw.translator import ir
from gw.translator.envoy.names import reserved_cluster_problem
from gw.translator.envoy.transform import own as own_transformations
from gw.translator.gateway.azure import check_function_route
from gw.translator.gateway.cors import build_cors
from gw.translator.gateway.delegation import Parent, delegate, inherit
from gw.translator.gateway.destinations import destination_upstream, refine_destination
from gw.translator.gateway.dynamicforwardproxy import destinations_set, request_target
from gw.translator.gateway.extauth import ExtAuthResolver
from gw.translator.gateway.headers import HeaderSecrets, build_header_manipulation
from gw.translator.gateway.invalid_routes import build_or_replace
from gw.translator.gateway.jwt_stages import HostJwt, build_route_jwt
from gw.translator.gateway.loadbalancer import build_hash_policies
from gw.translator.gateway.matchers import build_match
from gw.translator.gateway.optionrefs import merge_option_refs, merge_over
from gw.translator.gateway.orch import resolve_service_destination
from gw.translator.gateway.ratelimit import RateLimitResolver
from gw.translator.gateway.rbac import build_rbac
from gw.translator.gateway.redirects import build_redirect
from gw.translator.gateway.retries import build_retries
from gw.translator.gateway.routetracing import check_span_name
from gw.translator.gateway.settings import DEFAULT_ROUTES, RoutePolicy
from gw.translator.gateway.traffic import build_destination_traffic, build_route_traffic
from gw.translator.gateway.transform import build_transformations
from gw.translator.gateway.transform import inherit as inherit_transformations
from gw.translator.gateway.upstreamgroups import route_to_group, weights_too_large
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import Reports, ResourceReport

_NO_OPTIONS = RouteOptions()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RouteParts:
    """What a route's options make of each route it builds (None: nothing of its own)."""

    transformations: ir.StagedTransformations | None = None
    headers: ir.HeaderManipulation | None = None
    jwt: ir.RouteJwt | None = None
    rbac: ir.Rbac | None = None
    extauth: ir.ExtAuth | None = None
    ratelimit: ir.RateLimits | None = None
    retries: ir.RetryPolicy | None = None
    cors: ir.CorsPolicy | None = None
    traffic: ir.RouteTraffic | None = None


#: The parts of a route that sets no options (`RouteBuilder.build`).
_NO_PARTS = RouteParts()


def sets_nothing(options: RouteOptions) -> bool:
    """Whether `options` are those of a route that sets none: the shared empty value."""
    return options is _NO_OPTIONS


_CATCH_ALL = (Matcher(prefix="/"),)


@functools.lru_cache(maxsize=4096)
def _to_cluster(cluster: str) -> ir.WeightedCluster:
    """A destination to `cluster` alone: one value per cluster, since the IR is frozen
    (100,000 routes to ten Upstreams keep ten)."""
    return ir.WeightedCluster(cluster=cluster)


@functools.lru_cache(maxsize=4096)
def _forward_to(clusters: tuple[ir.WeightedCluster, ...]) -> ir.Forward:
    """A forward to `clusters` with no option: one value per destination, as `_to_cluster`."""
    return ir.Forward(clusters=clusters)


def source_ref(key: ResourceKey) -> ir.SourceRef:
    """The IR's reference to the resource `key` names."""
    return ir.SourceRef(kind=key.kind, namespace=key.namespace, name=key.name)


class RouteBuilder:
    """Builds the routes of one VirtualService, numbering them as Envoy will name them.

    The routes of the RouteTables it delegates to are built by child builders
    (`for_table`) that add to the same list, on behalf of the table."""

    def __init__(
        self,
        vs: api.VirtualService,
        vhost_name: str,
        refs: Refs,
        reports: Reports,
        *,
        jwt: HostJwt | None = None,
        policy: RoutePolicy = DEFAULT_ROUTES,
    ):
        self.vs = vs
        self.vhost_name = vhost_name
        self.refs = refs
        self.reports = reports
        self.report = self.root_report = reports.of(vs.key)
        #: The resource whose routes are being built (its key, and as its routes' origins
        #: name it: one value for all of them), and where they are in it.
        self.owner = vs.key
        self.source = source_ref(vs.key)
        self.prefix = "spec.virtualHost.routes"
        #: The virtual host's JWT checks and provider names (route RBAC reads their claims).
        self.jwt = jwt or HostJwt()
        #: What the Settings say about routes (`settings.RoutePolicy`).
        self.policy = policy
        self.routes: list[ir.Route] = []
        #: Where each route of the source (one per matcher) begins in `routes`: tables that
        #: share a weight are re-sorted route by route (`delegation.py`).
        self.route_starts: list[int] = []
        self.extauth = ExtAuthResolver(refs, vs.key, self.report)
        self.ratelimit = RateLimitResolver(refs, vs.key, self.report)
        #: The virtual host's transformations (what `inheritTransformation` appends).
        self.vhost_transformations: ir.StagedTransformations | None = None

    def for_table(self, table: api.RouteTable, report: ResourceReport) -> RouteBuilder:
        """A builder for `table`'s routes, adding to this one's routes."""
        child = copy.copy(self)
        child.owner, child.prefix, child.report = table.key, "spec.routes", report
        child.source = source_ref(table.key)
        child.extauth = ExtAuthResolver(self.refs, table.key, report)
        child.extauth.configs = self.extauth.configs
        child.ratelimit = RateLimitResolver(self.refs, table.key, report)
        return child

    def add(self, index: int, route: Route, parent: Parent | None = None) -> None:
        """Build the routes of `route` (and of the tables it delegates to); with Settings
        `invalidConfigPolicy.replaceInvalidRoutes`, one gw cannot build answers the policy's
        response instead (`invalid_routes.py`)."""
        if self.policy.invalid_route is not None and route.delegate_action is None:
            build_or_replace(self, index, route, parent, self.policy.invalid_route)
        else:
            self.build(index, route, parent)

    def build(self, index: int, route: Route, parent: Parent | None = None) -> None:
        field = f"{self.prefix}[{index}]"
        own = merge_option_refs(
            route.options,
            api.RouteOption,
            route.options_config_refs,
            referrer=self.owner,
            field=f"{field}.optionsConfigRefs",
            refs=self.refs,
            reports=self.reports,
            report=self.report,
        )
        options = merge_over(own, parent.options if parent else None) or _NO_OPTIONS
        if own and own.prefix_rewrite and route.route_action is None and not route.delegate_action:
            self.report.error(
                f"{field}.options.prefixRewrite",
                "prefix rewrite is only available for Route Actions",
            )
        if route.delegate_action is not None:
            if route.route_action or route.redirect_action or route.direct_response_action:
                self.report.error(
                    field,
                    "a route needs exactly one of routeAction, redirectAction, "
                    "directResponseAction or delegateAction",
                )
                return
            delegate(self, index, route, options, parent)
            return
        action = self._action(route, field, options)
        where = f"{field}.options"
        # Neither the route nor a parent sets options (most routes): every option builder
        # gives None and finds nothing (test_no_options checks it); the host's apply.
        parts = (
            _NO_PARTS if sets_nothing(options) else self._parts(options, own, action, where, parent)
        )
        self.route_starts.append(len(self.routes))
        for match, written in self.route_matches(route, field, parent):
            if action is None:
                continue
            self.routes.append(
                ir.Route(
                    name=f"{self.vhost_name}-route-{len(self.routes)}",
                    match=match,
                    action=action,
                    transformations=parts.transformations,
                    headers=parts.headers,
                    jwt=parts.jwt,
                    rbac=parts.rbac,
                    extauth=parts.extauth,
                    retries=parts.retries,
                    cors=parts.cors,
                    ratelimit=parts.ratelimit,
                    traffic=parts.traffic,
                    source=self.origin(written),
                    delegated_by=parent.via if parent else (),
                )
            )
        added = self.routes[self.route_starts[-1] :]
        traffic = parts.traffic
        if added and traffic is not None and traffic.tracing is not None:
            staged = own_transformations(added[0]) or self.vhost_transformations
            span = staged.span_name if staged is not None else None
            check_span_name(traffic.tracing, span, f"{where}.tracing", self.report)

    def _parts(
        self,
        options: RouteOptions,
        own: RouteOptions | None,
        action: ir.Forward | ir.DirectResponse | ir.Redirect | None,
        where: str,
        parent: Parent | None,
    ) -> RouteParts:
        """What the route's options make of it (`own`: its options before inheritance)."""
        transformations = self._transformations(options, where, parent)
        headers = build_header_manipulation(
            options.header_manipulation,
            f"{where}.headerManipulation",
            self.report,
            HeaderSecrets(self.refs, self.owner),
        )
        jwt, rbac = self._security(options, where)
        extauth = None
        if options.extauth is not None:
            extauth = self.extauth.resolve(options.extauth, f"{where}.extauth")
        return RouteParts(
            transformations=transformations,
            headers=headers,
            jwt=jwt,
            rbac=rbac,
            extauth=extauth,
            ratelimit=self.ratelimit.resolve(options, where),
            retries=build_retries(options.retries, f"{where}.retries", self.report),
            cors=build_cors(options.cors, f"{where}.cors", self.report, route_level=True),
            traffic=build_route_traffic(
                options,
                where,
                forwarded=isinstance(action, ir.Forward),
                own=own,
                refs=self.refs,
                owner=self.owner,
                report=self.report,
            ),
        )

    def _transformations(
        self, options: RouteOptions, where: str, parent: Parent | None
    ) -> ir.StagedTransformations | None:
        """The route's transformations; with `inheritTransformation`, its parent's (the
        delegating route's, or the virtual host's) follow its own."""
        own = build_transformations(
            options.staged_transformations, options.transformations, where, self.report
        )
        staged = options.staged_transformations
        if staged is None or not staged.inherit_transformation:
            return own
        if parent is None:
            return inherit_transformations(own, self.vhost_transformations)
        above = parent.options or _NO_OPTIONS
        scratch = ResourceReport()  # the parent's findings are reported where it is built
        return inherit_transformations(
            own,
            build_transformations(above.staged_transformations, above.transformations, "", scratch),
        )

    def origin(self, field: str) -> ir.RouteOrigin:
        """`field` of the resource whose routes are being built."""
        # Interned: every VirtualService has the same few field names.
        return ir.RouteOrigin(resource=self.source, field=sys.intern(field))

    def route_matches(
        self, route: Route, field: str, parent: Parent | None
    ) -> list[tuple[ir.RouteMatch, str]]:
        """Each match of the route and the field it comes from (the route itself when it has
        no matchers)."""
        if parent is not None and not route.matchers:
            return [(parent.match, field)]  # a delegated route without matchers takes its parent's
        out = []
        for m_index, matcher in enumerate(route.matchers or _CATCH_ALL):
            where = f"{field}.matchers[{m_index}]"
            match = self.match(matcher, where)
            if match is not None and parent is not None:
                match = inherit(match, parent, where, self.report)
            if match is not None:
                out.append((match, where if route.matchers else field))
        return out

    def _security(
        self, options: RouteOptions, field: str
    ) -> tuple[ir.RouteJwt | None, ir.Rbac | None]:
        """The route's JWT per stage and its own RBAC (None: the virtual host's applies)."""
        jwt, providers = build_route_jwt(
            options,
            field=field,
            host=self.jwt,
            tag=f"{self.vhost_name}_route{len(self.routes)}",
            referrer=self.owner,
            refs=self.refs,
            report=self.report,
        )
        if options.rbac is None:
            return jwt, None
        rbac = build_rbac(
            options.rbac, field=f"{field}.rbac", providers=providers, report=self.report
        )
        return jwt, rbac

    # --- matching -------------------------------------------------------------------------

    def match(self, m: Matcher, field: str) -> ir.RouteMatch | None:
        return build_match(m, field, self.report)

    # --- actions --------------------------------------------------------------------------

    def _action(
        self, route: Route, field: str, options: RouteOptions
    ) -> ir.Forward | ir.DirectResponse | ir.Redirect | None:
        actions = [
            k
            for k in ("route_action", "redirect_action", "direct_response_action")
            if getattr(route, k) is not None
        ]
        if len(actions) != 1:
            self.report.error(
                field,
                "a route needs exactly one of routeAction, redirectAction, "
                "directResponseAction or delegateAction",
            )
            return None
        if route.direct_response_action is not None:
            d = route.direct_response_action
            return ir.DirectResponse(status=d.status, body=d.body)
        if route.redirect_action is not None:
            return build_redirect(route.redirect_action, f"{field}.redirectAction", self.report)
        assert route.route_action is not None
        clusters = self._clusters(route, f"{field}.routeAction")
        if clusters is None:
            return None
        target = request_target(route.route_action, f"{field}.routeAction", self.report)
        if target is None and not clusters:
            action = route.route_action
            if action.cluster_header is not None or action.dynamic_forward_proxy is not None:
                return None  # in error (reported)
            return ir.DirectResponse(status=503)  # an upstream group that does not exist (warned)
        if not check_function_route(clusters, options.prefix_rewrite, field, self.report):
            return None
        if target is None and sets_nothing(options):
            return _forward_to(clusters)  # what the Forward below is then, shared
        return ir.Forward(
            clusters=clusters,
            cluster_header=target.cluster_header if target else None,
            dynamic_forward_proxy=target.dynamic_forward_proxy if target else None,
            prefix_rewrite=options.prefix_rewrite or None,
            timeout_ms=int(duration_ms(options.timeout)) if options.timeout else None,
            host_rewrite=options.host_rewrite or None,
            auto_host_rewrite=bool(options.auto_host_rewrite),
            hash_policies=build_hash_policies(
                options.lb_hash, f"{field}.options.lbHash", self.report
            ),
        )

    def _clusters(self, route: Route, field: str) -> tuple[ir.WeightedCluster, ...] | None:
        action = route.route_action
        assert action is not None
        if len(chosen := destinations_set(action)) > 1:
            self.report.error(field, f"set one destination, not {', '.join(chosen)}")
            return None
        if action.cluster_header is not None or action.dynamic_forward_proxy is not None:
            return ()  # the request names its upstream (checked by `request_target`)
        if action.single is not None:
            target = self._destination(action.single, f"{field}.single")
            return None if target is None else (target,)
        if action.multi is not None:
            dests = action.multi.destinations
            if not dests:
                self.report.error(
                    f"{field}.multi.destinations",
                    "must specify at least one weighted destination for multi destination routes",
                )
                return None
            if not any(d.weight > 0 for d in dests):
                self.report.error(
                    f"{field}.multi.destinations", "at least one destination needs a weight above 0"
                )
                return None
            if (total := sum(d.weight for d in dests)) > MAX_TOTAL_WEIGHT:
                self.report.error(f"{field}.multi.destinations", weights_too_large(total))
                return None
            out = []
            for i, d in enumerate(dests):
                target = self._destination(
                    d.destination, f"{field}.multi.destinations[{i}].destination"
                )
                if target is None:
                    return None
                where = f"{field}.multi.destinations[{i}].options"
                traffic = build_destination_traffic(
                    d.options, where, self.report, HeaderSecrets(self.refs, self.owner)
                )
                if d.weight == 0:
                    continue
                if d.options is not None:
                    target = dataclasses.replace(
                        target,
                        transformations=build_transformations(
                            d.options.staged_transformations,
                            d.options.transformations,
                            where,
                            self.report,
                        ),
                    )
                out.append(dataclasses.replace(target, weight=d.weight, traffic=traffic))
            return tuple(out)
        if action.upstream_group is not None:
            return self._group(action.upstream_group, f"{field}.upstreamGroup")
        self.report.error(
            field,
            "must specify either 'single', 'multi', 'upstreamGroup', 'clusterHeader' or "
            "'dynamicForwardProxy' for action",
        )
        return None

    def _group(self, ref: ResourceRef, field: str) -> tuple[ir.WeightedCluster, ...] | None:
        return route_to_group(
            ref, owner=self.owner, refs=self.refs, report=self.report, field=field
        )

    def _destination(self, dest: Destination, field: str) -> ir.WeightedCluster | None:
        if (dest.upstream is None) == (dest.orch is None):
            self.report.error(field, "a destination needs exactly one of upstream or orch")
            return None
        refs, report = self.refs, self.report
        if dest.orch is not None:
            target = resolve_service_destination(
                dest.orch,
                refs=refs,
                referrer=self.owner,
                field=f"{field}.orch",
                report=report,
                enabled=self.policy.orch_destinations,
            )
            return refine_destination(target, None, dest, refs=refs, field=field, report=report)
        assert dest.upstream is not None
        ref, where = dest.upstream, f"{field}.upstream"
        key = refs.key(api.Upstream, ref, self.owner)
        there, found = destination_upstream(refs, ref, referrer=self.owner, field=where)
        cluster = cluster_name(key.name, key.namespace)
        if (reserved := reserved_cluster_problem(cluster)) is not None:
            self.report.error(where, reserved)
            return None
        if not there and not self.refs.exists(key):
            self.report.warning(
                f"{field}.upstream",
                f"Route Warning: InvalidDestinationWarning. Reason: *v1.Upstream "
                f"{{ {key.namespace}.{key.name} }} not found",
            )
        target = _to_cluster(cluster)
        return refine_destination(target, found, dest, refs=refs, field=field, report=report)
