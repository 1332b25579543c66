"""`cors` (virtual host or route) → `ir.CorsPolicy`.

Envoy's CORS filter reads the most specific policy: a route's replaces its virtual host's
(the established gateway's `DEFAULT` merge). `disableForRoute` gives the route a policy that
switches the filter off there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from gw.api.cors import CorsPolicy
from gw.api.traffic import CorsPolicyMergeSettings
from gw.translator import ir
from gw.translator.regex import RegexError, capture_groups
from gw.translator.reports import ResourceReport


def build_cors(
    policy: CorsPolicy | None, field: str, report: ResourceReport, *, route_level: bool
) -> ir.CorsPolicy | None:
    if policy is None:
        return None
    if policy.disable_for_route:
        if not route_level:
            report.error(
                f"{field}.disableForRoute", "disableForRoute is only valid on route options"
            )
            return None
        return ir.CorsPolicy(disabled=True)
    if not policy.allow_origin and not policy.allow_origin_regex:
        report.error(field, "must provide at least one of AllowOrigin or AllowOriginRegex")
        return None
    for i, pattern in enumerate(policy.allow_origin_regex):
        try:
            capture_groups(pattern)
        except RegexError as exc:
            report.error(f"{field}.allowOriginRegex[{i}]", str(exc))
            return None
    return ir.CorsPolicy(
        allow_origins=tuple(policy.allow_origin),
        allow_origin_regexes=tuple(policy.allow_origin_regex),
        allow_methods=tuple(policy.allow_methods),
        allow_headers=tuple(policy.allow_headers),
        expose_headers=tuple(policy.expose_headers),
        max_age=policy.max_age,
        allow_credentials=policy.allow_credentials,
    )


def merge_cors_policies(
    routes: Sequence[ir.Route],
    host: ir.CorsPolicy | None,
    settings: CorsPolicyMergeSettings | None,
) -> list[ir.Route]:
    """The routes with `corsPolicyMergeSettings` applied: with `exposeHeaders: UNION`, a
    route policy that lists expose headers gets the host's too (host's first, each once), as
    the route's policy replaces the host's in Envoy. Other fields stay the route's."""
    if settings is None or settings.expose_headers != "UNION" or host is None:
        return list(routes)
    out = []
    for route in routes:
        own = route.cors
        if own is not None and not own.disabled and own.expose_headers and host.expose_headers:
            merged = tuple(dict.fromkeys((*host.expose_headers, *own.expose_headers)))
            route = dataclasses.replace(route, cors=dataclasses.replace(own, expose_headers=merged))
        out.append(route)
    return out
