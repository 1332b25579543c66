"""`ir.Rbac` → Envoy's `rbac` filter with per-virtual-host and per-route policies
(ENVOY-NOTES.md §2b).

The listener's filter has no rules of its own (it enforces nothing) and is disabled by
default, so that requests to hosts without RBAC do not even create it; each virtual host
with RBAC carries its policies as `RBACPerRoute` (which turns the filter on there), and a
route may replace them or, with an empty `RBACPerRoute`, turn RBAC off. Policies `ALLOW`:
a request passes when one matches, else 403 `RBAC: access denied`.

Principals read claims from the payloads `jwt_authn` verified (`sourced_metadata`, dynamic
metadata of the jwt_authn filter under the provider's name; `Principal.metadata` is
deprecated in Envoy 1.40).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from envoy.config.rbac.v3 import rbac_pb2
from envoy.config.route.v3 import route_components_pb2 as rc_pb2
from envoy.extensions.filters.http.rbac.v3 import rbac_pb2 as rbac_filter_pb2
from envoy.extensions.filters.network.http_connection_manager.v3 import (
    http_connection_manager_pb2 as hcm_pb2,
)
from envoy.type.matcher.v3 import metadata_pb2, path_pb2, regex_pb2, string_pb2, value_pb2
from google.protobuf.message import Message

from gw.translator import ir
from gw.translator.envoy import names
from gw.translator.envoy.packing import pack


class RbacFilter:
    name = names.RBAC

    def listener_filter(self, vhosts: Sequence[ir.VirtualHost]) -> hcm_pb2.HttpFilter | None:
        used = any(v.rbac is not None or any(r.rbac is not None for r in v.routes) for v in vhosts)
        if not used:
            return None
        return hcm_pb2.HttpFilter(
            name=self.name, typed_config=pack(rbac_filter_pb2.RBAC()), disabled=True
        )

    def per_virtual_host(self, vhost: ir.VirtualHost) -> Message | None:
        return None if vhost.rbac is None else build_per_route(vhost.rbac)

    def per_route(self, vhost: ir.VirtualHost, route: ir.Route) -> Message | None:
        return None if route.rbac is None else build_per_route(route.rbac)

    def resources(self, proxy: ir.Proxy) -> Iterable[tuple[str, str, Message]]:
        return ()


def build_per_route(rbac: ir.Rbac) -> rbac_filter_pb2.RBACPerRoute:
    """An empty `RBACPerRoute` disables RBAC; otherwise the policies, by name."""
    if rbac.disabled:
        return rbac_filter_pb2.RBACPerRoute()
    rules = rbac_pb2.RBAC(action=rbac_pb2.RBAC.ALLOW)
    for policy in rbac.policies:
        rules.policies[policy.name].CopyFrom(build_policy(policy))
    return rbac_filter_pb2.RBACPerRoute(rbac=rbac_filter_pb2.RBAC(rules=rules))


def build_policy(policy: ir.RbacPolicy) -> rbac_pb2.Policy:
    return rbac_pb2.Policy(
        permissions=[build_permission(policy)],
        principals=[build_principal(p) for p in policy.principals],
    )


def build_permission(policy: ir.RbacPolicy) -> rbac_pb2.Permission:
    """Method (any of) AND path prefix; neither means any request."""
    rules = []
    if policy.methods:
        methods = [
            rbac_pb2.Permission(
                header=rc_pb2.HeaderMatcher(
                    name=":method", string_match=string_pb2.StringMatcher(exact=m)
                )
            )
            for m in policy.methods
        ]
        rules.append(methods[0] if len(methods) == 1 else _any_permission(methods))
    if policy.path_prefix is not None:
        # The path without its query string, after the connection manager normalised it.
        path = path_pb2.PathMatcher(path=string_pb2.StringMatcher(prefix=policy.path_prefix))
        rules.append(rbac_pb2.Permission(url_path=path))
    if not rules:
        return rbac_pb2.Permission(any=True)
    if len(rules) == 1:
        return rules[0]
    return rbac_pb2.Permission(and_rules=rbac_pb2.Permission.Set(rules=rules))


def _any_permission(rules: list[rbac_pb2.Permission]) -> rbac_pb2.Permission:
    return rbac_pb2.Permission(or_rules=rbac_pb2.Permission.Set(rules=rules))


def build_principal(principal: ir.RbacPrincipal) -> rbac_pb2.Principal:
    """All claims in one payload: for each provider that may have verified the token, the
    claims AND-ed; the providers OR-ed (only verified payloads are in the metadata)."""
    per_provider = [_all_claims(key, principal.claims) for key in principal.providers]
    if len(per_provider) == 1:
        return per_provider[0]
    return rbac_pb2.Principal(or_ids=rbac_pb2.Principal.Set(ids=per_provider))


def _all_claims(provider: str, claims: Sequence[ir.ClaimMatch]) -> rbac_pb2.Principal:
    ids = [_claim(provider, c) for c in claims]
    if len(ids) == 1:
        return ids[0]
    return rbac_pb2.Principal(and_ids=rbac_pb2.Principal.Set(ids=ids))


def _claim(provider: str, claim: ir.ClaimMatch) -> rbac_pb2.Principal:
    path = [metadata_pb2.MetadataMatcher.PathSegment(key=k) for k in (provider, *claim.path)]
    matcher = metadata_pb2.MetadataMatcher(
        filter=names.JWT_AUTHN, path=path, value=claim_value(claim)
    )
    return rbac_pb2.Principal(sourced_metadata=rbac_pb2.SourcedMetadata(metadata_matcher=matcher))


def claim_value(claim: ir.ClaimMatch) -> value_pb2.ValueMatcher:
    if claim.kind == "bool":
        return value_pb2.ValueMatcher(bool_match=claim.value == "true")
    if claim.kind == "regex":
        regex = string_pb2.StringMatcher(safe_regex=regex_pb2.RegexMatcher(regex=claim.value))
        return value_pb2.ValueMatcher(string_match=regex)
    exact = value_pb2.ValueMatcher(string_match=string_pb2.StringMatcher(exact=claim.value))
    if claim.kind == "list_contains":
        return value_pb2.ValueMatcher(list_match=value_pb2.ListMatcher(one_of=exact))
    return exact
