"""What Envoy's `rbac` filter decides: the route's (or virtual host's) `RBACPerRoute` policies,
each with its permissions (method, path, combinations) and principals (claims of the token
`jwt_authn` verified, read from its dynamic metadata), evaluated against the request.

`ALLOW` rules let a request through when a policy matches, else 403 `RBAC: access denied`;
`DENY` rules the other way round. An empty `RBACPerRoute` turns RBAC off on the route.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from envoy.config.rbac.v3 import rbac_pb2
from envoy.extensions.filters.http.rbac.v3 import rbac_pb2 as rbac_filter_pb2
from envoy.type.matcher.v3 import value_pb2

from gw.explain.matching import header_check, string_matches
from gw.explain.request import Request

DENIED = "RBAC: access denied"
JWT_AUTHN = "envoy.filters.http.jwt_authn"


@dataclass(frozen=True, slots=True, kw_only=True)
class RbacResult:
    summary: str
    details: tuple[str, ...] = ()
    denied: bool = False


def evaluate(
    per_route: rbac_filter_pb2.RBACPerRoute | None,
    request: Request,
    path: str,
    payloads: Mapping[str, dict[str, Any]],
) -> RbacResult:
    if per_route is None:
        return RbacResult(summary="no policies on this route: the request passes")
    if not per_route.HasField("rbac") or not per_route.rbac.HasField("rules"):
        return RbacResult(summary="turned off on this route: the request passes")
    rules = per_route.rbac.rules
    allow = rules.action == rbac_pb2.RBAC.ALLOW
    evaluator = _Evaluator(request, path, payloads)
    matched = []
    details = []
    for name in sorted(rules.policies):
        policy = rules.policies[name]
        permitted = any(evaluator.permission(p) for p in policy.permissions)
        principal = any(evaluator.principal(p) for p in policy.principals)
        if permitted and principal:
            matched.append(name)
            details.append(f"policy {name}: matches")
        elif not allow:  # a DENY policy that does not match is all there is to say
            details.append(f"policy {name}: does not match")
        elif not permitted:
            details.append(f"policy {name}: the method or path is not permitted")
        else:
            details.append(f"policy {name}: the token's claims do not match")
    if not payloads and any(
        _reads_claims(p) for r in rules.policies.values() for p in r.principals
    ):
        details.append("no verified token: claims cannot match")
    action = "ALLOW" if allow else "DENY"
    summary = f"{action} policies {', '.join(sorted(rules.policies))}"
    denied = not matched if allow else bool(matched)
    return RbacResult(summary=summary, details=tuple(details), denied=denied)


def _reads_claims(principal: rbac_pb2.Principal) -> bool:
    """Whether `principal` looks at a verified token's claims (gw's own DENY policies, the
    `Host` check, do not: saying that no token was verified would only mislead there)."""
    ident = principal.WhichOneof("identifier")
    if ident == "and_ids":
        return any(_reads_claims(p) for p in principal.and_ids.ids)
    if ident == "or_ids":
        return any(_reads_claims(p) for p in principal.or_ids.ids)
    if ident == "not_id":
        return _reads_claims(principal.not_id)
    return ident in ("metadata", "sourced_metadata")


class _Evaluator:
    def __init__(self, request: Request, path: str, payloads: Mapping[str, dict[str, Any]]):
        self.request = request
        self.path = path
        self.payloads = payloads

    def permission(self, permission: rbac_pb2.Permission) -> bool:
        rule = permission.WhichOneof("rule")
        if rule == "any":
            return bool(permission.any)
        if rule == "and_rules":
            return all(self.permission(p) for p in permission.and_rules.rules)
        if rule == "or_rules":
            return any(self.permission(p) for p in permission.or_rules.rules)
        if rule == "not_rule":
            return not self.permission(permission.not_rule)
        if rule == "header":
            return header_check(permission.header, self.request).ok
        if rule == "url_path":
            return string_matches(permission.url_path.path, self.path)
        return False  # ports, addresses, ...: gw sets none

    def principal(self, principal: rbac_pb2.Principal) -> bool:
        ident = principal.WhichOneof("identifier")
        if ident == "any":
            return bool(principal.any)
        if ident == "and_ids":
            return all(self.principal(p) for p in principal.and_ids.ids)
        if ident == "or_ids":
            return any(self.principal(p) for p in principal.or_ids.ids)
        if ident == "not_id":
            return not self.principal(principal.not_id)
        if ident == "header":
            return header_check(principal.header, self.request).ok
        matcher = None
        if ident == "sourced_metadata":
            matcher = principal.sourced_metadata.metadata_matcher
        elif ident == "metadata":
            matcher = principal.metadata
        if matcher is None or matcher.filter != JWT_AUTHN:
            return False
        value: Any = self.payloads
        for segment in matcher.path:
            if not isinstance(value, Mapping) or segment.key not in value:
                return bool(matcher.invert)
            value = value[segment.key]
        return value_matches(matcher.value, value) != bool(matcher.invert)


def value_matches(matcher: value_pb2.ValueMatcher, value: Any) -> bool:
    kind = matcher.WhichOneof("match_pattern")
    if kind == "string_match":
        return isinstance(value, str) and string_matches(matcher.string_match, value)
    if kind == "bool_match":
        return isinstance(value, bool) and value == matcher.bool_match
    if kind == "present_match":
        return bool(matcher.present_match)
    if kind == "double_match":
        return isinstance(value, int | float) and float(value) == matcher.double_match.exact
    if kind == "list_match":
        return isinstance(value, list) and any(
            value_matches(matcher.list_match.one_of, v) for v in value
        )
    if kind == "null_match":
        return value is None
    return False
