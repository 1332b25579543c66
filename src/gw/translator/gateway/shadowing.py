"""`shadowing` on a route → `ir.Shadow`: a copy of a share of the route's requests to
another Upstream (Envoy's request mirroring), answers ignored. The copy's Host gets
`-shadow` appended unless `disableShadowHostSuffixAppend`; `hostRewriteLiteral` replaces it
whole. Only forwarded routes shadow (the check is the route builder's)."""

from __future__ import annotations

from gw import api
from gw.api import ResourceKey
from gw.api.shadowing import RouteShadowing
from gw.translator import ir
from gw.translator.gateway.matching import percentage
from gw.translator.gateway.upstreams import cluster_name
from gw.translator.refs import Refs
from gw.translator.reports import ResourceReport


def build_shadow(
    shadowing: RouteShadowing | None,
    field: str,
    *,
    refs: Refs,
    owner: ResourceKey,
    report: ResourceReport,
) -> ir.Shadow | None:
    if shadowing is None:
        return None
    if shadowing.upstream is None:
        report.error(f"{field}.upstream", "invalid plugin spec: must specify an upstream ref")
        return None
    if not 0.0 <= shadowing.percentage <= 100.0:
        report.error(
            f"{field}.percentage",
            f"shadow percentage must be between 0 and 100, received {shadowing.percentage:g}",
        )
        return None
    share = percentage(shadowing.percentage, f"{field}.percentage", report)
    assert share is not None
    key = refs.key(api.Upstream, shadowing.upstream, owner)
    found = refs.resolve(
        api.Upstream, shadowing.upstream, referrer=owner, field=f"{field}.upstream"
    )
    if found is None and not refs.exists(key):
        report.warning(
            f"{field}.upstream",
            f"Upstream {key.namespace}.{key.name} not found: no copies are sent until it exists",
        )
    host = shadowing.host_rewrite_literal or None
    return ir.Shadow(
        cluster=cluster_name(key.name, key.namespace),
        share=share,
        keep_host=shadowing.disable_shadow_host_suffix_append or host is not None,
        host=host,
    )
