"""jwt_authn as explain predicts it: where tokens are looked for, and each failure Envoy
answers with (the order: form, issuer, time, audience, signature)."""

from __future__ import annotations

import time

from envoy.extensions.filters.http.jwt_authn.v3 import config_pb2 as jwt_pb2

from gw.explain.jwt import evaluate
from gw.explain.request import Request
from gw.translator.gateway.jwks import local_jwks
from tests.support.tokens import SigningKey

ISSUER = "https://issuer.example.com"


def config(key: SigningKey, audiences: tuple[str, ...] = ()) -> jwt_pb2.JwtAuthentication:
    provider = jwt_pb2.JwtProvider(
        issuer=ISSUER, audiences=list(audiences), payload_in_metadata="main"
    )
    provider.local_jwks.inline_string = local_jwks(key.public_pem())
    out = jwt_pb2.JwtAuthentication()
    out.providers["main"].CopyFrom(provider)
    out.requirement_map["host"].CopyFrom(jwt_pb2.JwtRequirement(provider_name="main"))
    return out


def verdict(cfg: jwt_pb2.JwtAuthentication, *headers: tuple[str, str], query: str = "") -> str:
    request = Request(method="GET", scheme="http", authority="x", target="/", headers=headers)
    per_route = jwt_pb2.PerRouteConfig(requirement_name="host")
    result = evaluate(cfg, per_route, request, query, time.time())
    return f"{result.denial.status} {result.denial.body}" if result.denial else "passes"


def bearer(token: str) -> tuple[str, str]:
    return ("authorization", f"Bearer {token}")


def test_each_failure_as_envoy_answers_it() -> None:
    key = SigningKey()
    cfg = config(key, audiences=("shop",))
    assert verdict(cfg) == "401 Jwt is missing"
    assert verdict(cfg, bearer("abc")).startswith("401 Jwt is not in the form")
    assert verdict(cfg, bearer(key.token("https://other", aud="shop"))) == (
        "401 Jwt issuer is not configured"
    )
    expired = key.token(ISSUER, aud="shop", exp=int(time.time()) - 3600)
    assert verdict(cfg, bearer(expired)) == "401 Jwt is expired"
    assert verdict(cfg, bearer(key.token(ISSUER, aud="blog"))) == (
        "403 Audiences in Jwt are not allowed"
    )
    forged = SigningKey().token(ISSUER, aud="shop")
    assert verdict(cfg, bearer(forged)) == "401 Jwt verification fails"
    good = key.token(ISSUER, aud="shop")
    assert verdict(cfg, bearer(good)) == "passes"
    assert verdict(cfg, query=f"access_token={good}") == "passes"


def test_off_on_a_route_and_no_requirement() -> None:
    cfg = config(SigningKey())
    request = Request(method="GET", scheme="http", authority="x", target="/")
    off = evaluate(cfg, jwt_pb2.PerRouteConfig(disabled=True), request, "", time.time())
    assert off.denial is None and off.summary.startswith("turned off on this route")
    none = evaluate(cfg, None, request, "", time.time())
    assert none.denial is None and none.summary.startswith("no requirement")
