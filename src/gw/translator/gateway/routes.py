"""Routes of a virtual host → IR routes, in declared order (the first match wins).

Each matcher of a route becomes its own IR route (matchers are OR-ed); a route without
matchers matches everything, like `prefix: /`. Destinations are resolved through `Refs`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from gw import api
from gw.api.duration import duration_ms
from gw.api.virtualservice import Destination, Matcher, Route, RouteOptions
from gw.translator import ir
from gw.translator.gateway.extauth import ExtAuthResolver
from gw.translator.gateway.headers import build_header_manipulation
from gw.translator.gateway.orch import resolve_service_destination
from gw.translator.gateway.ratelimit import RateLimitResolver
from gw.translator.gateway.rbac import build_rbac
from gw.translator.gateway.transform import build_staged_transformations
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import ResourceReport

_REDIRECT_CODES = {
    None: 301,
    "MOVED_PERMANENTLY": 301,
    "FOUND": 302,
    "SEE_OTHER": 303,
    "TEMPORARY_REDIRECT": 307,
    "PERMANENT_REDIRECT": 308,
}


_NO_OPTIONS = RouteOptions()
_CATCH_ALL = (Matcher(prefix="/"),)


class RouteBuilder:
    """Builds the routes of one VirtualService, numbering them as Envoy will name them."""

    def __init__(
        self,
        vs: api.VirtualService,
        vhost_name: str,
        refs: Refs,
        report: ResourceReport,
        *,
        jwt_providers: Mapping[str, str] | None = None,
    ):
        self.vs = vs
        self.vhost_name = vhost_name
        self.refs = refs
        self.report = report
        #: The virtual host's JWT provider names → IR names (route RBAC reads their claims).
        self.jwt_providers = jwt_providers or {}
        self.routes: list[ir.Route] = []
        self.extauth = ExtAuthResolver(refs, vs.key, report)
        self.ratelimit = RateLimitResolver(refs, vs.key, report)

    def add(self, index: int, route: Route) -> None:
        field = f"spec.virtualHost.routes[{index}]"
        action = self._action(route, field)
        options = route.options or _NO_OPTIONS
        transformations = build_staged_transformations(
            options.staged_transformations, f"{field}.options.stagedTransformations", self.report
        )
        headers = build_header_manipulation(
            options.header_manipulation, f"{field}.options.headerManipulation", self.report
        )
        jwt_disabled, rbac = self._security(options, f"{field}.options")
        extauth = None
        if options.extauth is not None:
            extauth = self.extauth.resolve(options.extauth, f"{field}.options.extauth")
        ratelimit = self.ratelimit.resolve(options, f"{field}.options")
        matchers = route.matchers or _CATCH_ALL
        for m_index, matcher in enumerate(matchers):
            match = self._match(matcher, f"{field}.matchers[{m_index}]")
            if match is None or action is None:
                continue
            name = f"{self.vhost_name}-route-{len(self.routes)}"
            self.routes.append(
                ir.Route(
                    name=name,
                    match=match,
                    action=action,
                    transformations=transformations,
                    headers=headers,
                    jwt_disabled=jwt_disabled,
                    rbac=rbac,
                    extauth=extauth,
                    ratelimit=ratelimit,
                )
            )

    def _security(self, options: RouteOptions, field: str) -> tuple[bool, ir.Rbac | None]:
        """`jwt.disable` and the route's own RBAC (None: the virtual host's applies)."""
        jwt_disabled = options.jwt is not None and options.jwt.disable
        if jwt_disabled and not self.jwt_providers:
            self.report.warning(
                f"{field}.jwt.disable", "no effect: the virtual host verifies no JWT"
            )
        if options.rbac is None:
            return jwt_disabled, None
        rbac = build_rbac(
            options.rbac, field=f"{field}.rbac", providers=self.jwt_providers, report=self.report
        )
        return jwt_disabled, rbac

    # --- matching -------------------------------------------------------------------------

    def _match(self, m: Matcher, field: str) -> ir.RouteMatch | None:
        paths = [
            (k, v)
            for k, v in (("prefix", m.prefix), ("exact", m.exact), ("regex", m.regex))
            if v is not None
        ]
        if not paths:
            self.report.error(
                field, "no path specifier provided: set one of prefix, exact or regex"
            )
            return None
        if len(paths) > 1:
            names = ", ".join(k for k, _ in paths)
            self.report.error(field, f"a matcher takes one path specifier, not {names}")
            return None
        kind, path = paths[0]
        if kind in ("prefix", "exact") and not path.startswith("/"):
            self.report.error(f"{field}.{kind}", f"{path!r} must start with /")
            return None
        if kind == "regex" and not self._regex_ok(path, f"{field}.regex"):
            return None
        headers = []
        for i, h in enumerate(m.headers):
            if h.regex and not self._regex_ok(h.value, f"{field}.headers[{i}].value"):
                return None
            headers.append(
                ir.HeaderMatch(name=h.name, value=h.value, regex=h.regex, invert=h.invert_match)
            )
        query = []
        for i, q in enumerate(m.query_parameters):
            if q.regex and not self._regex_ok(q.value, f"{field}.queryParameters[{i}].value"):
                return None
            query.append(ir.QueryMatch(name=q.name, value=q.value, regex=q.regex))
        return ir.RouteMatch(
            path_kind=kind,  # type: ignore[arg-type]
            path=path,
            case_sensitive=m.case_sensitive is not False,
            headers=tuple(headers),
            query=tuple(query),
            methods=tuple(m.methods),
        )

    def _regex_ok(self, pattern: str, field: str) -> bool:
        try:
            capture_groups(pattern)
        except RegexError as exc:
            self.report.error(field, str(exc))
            return False
        return True

    # --- actions --------------------------------------------------------------------------

    def _action(
        self, route: Route, field: str
    ) -> ir.Forward | ir.DirectResponse | ir.Redirect | None:
        actions = [
            k
            for k in ("route_action", "redirect_action", "direct_response_action")
            if getattr(route, k) is not None
        ]
        if len(actions) != 1:
            self.report.error(
                field,
                "a route needs exactly one of routeAction, redirectAction or directResponseAction",
            )
            return None
        if route.direct_response_action is not None:
            d = route.direct_response_action
            return ir.DirectResponse(status=d.status, body=d.body)
        if route.redirect_action is not None:
            r = route.redirect_action
            return ir.Redirect(
                host=r.host_redirect,
                path=r.path_redirect,
                prefix_rewrite=r.prefix_rewrite,
                response_code=_REDIRECT_CODES[r.response_code],
                https=r.https_redirect,
                strip_query=r.strip_query,
                port=r.port_redirect,
            )
        assert route.route_action is not None
        clusters = self._clusters(route, f"{field}.routeAction")
        if clusters is None:
            return None
        options = route.options or _NO_OPTIONS
        return ir.Forward(
            clusters=clusters,
            prefix_rewrite=options.prefix_rewrite or None,
            timeout_ms=int(duration_ms(options.timeout)) if options.timeout else None,
            host_rewrite=options.host_rewrite or None,
            auto_host_rewrite=bool(options.auto_host_rewrite),
        )

    def _clusters(self, route: Route, field: str) -> tuple[ir.WeightedCluster, ...] | None:
        action = route.route_action
        assert action is not None
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
            out = []
            for i, d in enumerate(dests):
                target = self._destination(
                    d.destination, f"{field}.multi.destinations[{i}].destination"
                )
                if target is None:
                    return None
                if d.weight > 0:
                    out.append(dataclasses.replace(target, weight=d.weight))
            return tuple(out)
        if action.upstream_group is not None:
            self.report.error(
                f"{field}.upstreamGroup",
                "upstream groups are not supported by this gw build yet; use multi destinations",
            )
            return None
        self.report.error(
            field, "must specify either 'single', 'multi' or 'upstreamGroup' for action"
        )
        return None

    def _destination(self, dest: Destination, field: str) -> ir.WeightedCluster | None:
        if (dest.upstream is None) == (dest.orch is None):
            self.report.error(field, "a destination needs exactly one of upstream or orch")
            return None
        if dest.orch is not None:
            return resolve_service_destination(
                dest.orch,
                refs=self.refs,
                referrer=self.vs.key,
                field=f"{field}.orch",
                report=self.report,
            )
        assert dest.upstream is not None
        key = self.refs.key(api.Upstream, dest.upstream, self.vs.key)
        found = self.refs.resolve(
            api.Upstream, dest.upstream, referrer=self.vs.key, field=f"{field}.upstream"
        )
        if found is None and not self.refs.exists(key):
            self.report.warning(
                f"{field}.upstream",
                f"Route Warning: InvalidDestinationWarning. Reason: *v1.Upstream "
                f"{{ {key.namespace}.{key.name} }} not found",
            )
        return ir.WeightedCluster(cluster=cluster_name(key.name, key.namespace))
