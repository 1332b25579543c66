"""rbac as explain predicts it, and what it says of each policy: gw's own DENY policy (the
`Host` check, as the translator writes it) and a user's ALLOW policy on a token's claims."""

from __future__ import annotations

from envoy.config.rbac.v3 import rbac_pb2
from envoy.extensions.filters.http.rbac.v3 import rbac_pb2 as rbac_filter_pb2
from envoy.type.matcher.v3 import metadata_pb2, string_pb2, value_pb2

from gw.explain.rbac import JWT_AUTHN, RbacResult, evaluate
from gw.explain.request import Request
from gw.translator.envoy.hcm import host_check


def explained(
    rules: rbac_pb2.RBAC, authority: str = "api.example.com", payloads: dict | None = None
) -> RbacResult:
    request = Request(method="GET", scheme="http", authority=authority, target="/", headers=())
    per_route = rbac_filter_pb2.RBACPerRoute(rbac=rbac_filter_pb2.RBAC(rules=rules))
    return evaluate(per_route, request, "/", payloads or {})


def host_check_rules() -> rbac_pb2.RBAC:
    config = rbac_filter_pb2.RBAC()
    host_check().typed_config.Unpack(config)
    return config.rules


def test_the_host_check_says_whether_its_deny_policy_matches_and_nothing_of_tokens() -> None:
    fine = explained(host_check_rules())
    assert (fine.summary, fine.details, fine.denied) == (
        "DENY policies bad-host",
        ("policy bad-host: does not match",),
        False,
    )
    bad = explained(host_check_rules(), authority="user@api.example.com")
    assert (bad.details, bad.denied) == (("policy bad-host: matches",), True)


def test_an_allow_policy_on_claims_says_no_token_was_verified() -> None:
    role = metadata_pb2.MetadataMatcher(
        filter=JWT_AUTHN,
        path=[
            metadata_pb2.MetadataMatcher.PathSegment(key="main"),
            metadata_pb2.MetadataMatcher.PathSegment(key="role"),
        ],
        value=value_pb2.ValueMatcher(string_match=string_pb2.StringMatcher(exact="admin")),
    )
    rules = rbac_pb2.RBAC(action=rbac_pb2.RBAC.ALLOW)
    rules.policies["admins"].CopyFrom(
        rbac_pb2.Policy(
            permissions=[rbac_pb2.Permission(any=True)],
            principals=[rbac_pb2.Principal(metadata=role)],
        )
    )
    anonymous = explained(rules)
    assert anonymous.details == (
        "policy admins: the token's claims do not match",
        "no verified token: claims cannot match",
    )
    assert anonymous.denied
    admin = explained(rules, payloads={"main": {"role": "admin"}})
    assert (admin.details, admin.denied) == (("policy admins: matches",), False)
