"""JWT verification end to end: `gw up`, real Envoy, tokens signed here with PyJWT.

One `gw up` serves every case of this module. The identity provider's key endpoint is
faked by `JwksServer` (a `http.server` thread serving a JWKS document), reached through an
Upstream like a real one; everything else is the product. "Never reaches the upstream" is
checked with Envoy's request counter of the echo upstream's cluster.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.tokens import (
    JwksServer,
    SigningKey,
    hs256_with_public_key,
    tampered,
    unsigned_token,
)
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

MAIN = "https://main.test"
EDGE = "https://edge.test"
OTHER = "https://other.test"
REMOTE = "https://remote.test"
ECHO_REQUESTS = "cluster.echo_gw-system.upstream_rq_total"


def upstream(name: str, port: int) -> dict[str, Any]:
    return {
        "apiVersion": "gw.vendor.io/v1",
        "kind": "Upstream",
        "metadata": {"name": name, "namespace": "gw-system"},
        "spec": {"static": {"hosts": [{"addr": "127.0.0.1", "port": port}]}},
    }


def virtual_service(
    name: str, domain: str, providers: dict[str, Any], routes: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    to_echo = {"single": {"upstream": {"name": "echo", "namespace": "gw-system"}}}
    default = [{"matchers": [{"prefix": "/"}], "routeAction": to_echo}]
    return {
        "apiVersion": "gateway.vendor.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "virtualHost": {
                "domains": [domain],
                "options": {"jwt": {"providers": providers}},
                "routes": [{**r, "routeAction": to_echo} for r in routes or []] + default,
            }
        },
    }


def local(issuer: str, key: SigningKey, **fields: Any) -> dict[str, Any]:
    return {"issuer": issuer, "jwks": {"local": {"key": key.public_pem()}}, **fields}


def remote(issuer: str, upstream_name: str) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "jwks": {
            "remote": {
                "url": "http://idp.test/.well-known/jwks.json",
                "upstreamRef": {"name": upstream_name, "namespace": "gw-system"},
                "cacheDuration": "1s",
            }
        },
    }


@dataclass
class Env:
    gw: GwUp
    folder: Path
    main: SigningKey
    edge: SigningKey
    other: SigningKey
    k1: SigningKey
    k2: SigningKey
    jwks: JwksServer
    late_port: int

    def get(self, host: str, path: str = "/x", token: str | None = None, **kw: Any) -> Any:
        headers = dict(kw.pop("headers", {}))
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return self.gw.get(path, host=host, headers=headers, **kw)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp("jwt")
    main, edge, other = SigningKey("RSA"), SigningKey("EC"), SigningKey("RSA")
    k1, k2 = SigningKey("RSA", kid="k1"), SigningKey("RSA", kid="k2")
    echo = Echo(tmp, "echo")
    jwks = JwksServer(keys=[k1.jwk()])
    late_port = free_port()  # nothing listens here until a test starts a key server on it
    folder = tmp / "config"
    folder.mkdir()
    documents = [
        upstream("echo", echo.port),
        upstream("idp", jwks.port),
        upstream("late-idp", late_port),
        virtual_service(
            "local",
            "local.test",
            {
                "main": local(
                    MAIN,
                    main,
                    claimsToHeaders=[
                        {"claim": "sub", "header": "x-jwt-sub"},
                        {"claim": "org.id", "header": "x-jwt-org"},
                        {"claim": "level", "header": "x-jwt-level"},
                        {"claim": "admin", "header": "x-jwt-admin"},
                        {"claim": "groups", "header": "x-jwt-groups"},
                    ],
                ),
                "edge": local(EDGE, edge),
            },
            routes=[{"matchers": [{"prefix": "/public"}], "options": {"jwt": {"disable": True}}}],
        ),
        virtual_service(
            "custom",
            "custom.test",
            {
                "api": local(
                    MAIN,
                    main,
                    audiences=["gw-api"],
                    keepToken=True,
                    tokenSource={
                        "headers": [
                            {"header": "x-api-token"},
                            {"header": "authorization", "prefix": "Token "},
                        ],
                        "queryParams": ["tok"],
                    },
                )
            },
        ),
        virtual_service("other", "other.test", {"other": local(OTHER, other)}),
        virtual_service("remote", "remote.test", {"idp": remote(REMOTE, "idp")}),
        virtual_service("late", "late.test", {"idp": remote(REMOTE, "late-idp")}),
    ]
    (folder / "config.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    gw = GwUp(folder, tmp / "home")
    try:
        for vs in ("local", "custom", "other", "remote", "late"):
            gw.wait_status(f"VirtualService default.{vs}", "Accepted")
        yield Env(gw, folder, main, edge, other, k1, k2, jwks, late_port)
    finally:
        gw.stop()
        echo.stop()
        jwks.stop()


def echoed(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, (response.status_code, response.text)
    assert response.headers["x-echo-name"] == "echo"
    body: dict[str, Any] = response.json()
    return body


def assert_denied(response: httpx.Response, status: int, body: str) -> None:
    assert (response.status_code, response.text) == (status, body)
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["content-length"] == str(len(body.encode()))
    assert "x-echo-name" not in response.headers


# --- SPEC.md rows ------------------------------------------------------------------------


def test_no_token_is_401_jwt_is_missing(env: Env) -> None:
    before = env.gw.envoy_stat(ECHO_REQUESTS)
    response = env.get("local.test")
    assert response.status_code == 401
    assert response.content == b"Jwt is missing" and len(response.content) == 14
    assert response.headers["content-type"] == "text/plain"
    assert response.headers["www-authenticate"] == 'Bearer realm="http://local.test/x"'
    assert env.gw.envoy_stat(ECHO_REQUESTS) == before


def test_bearer_token_passes_and_claims_become_headers(env: Env) -> None:
    token = env.main.token(
        MAIN, sub="alice", org={"id": "o-42"}, level=3, admin=True, groups=["dev", "ops"]
    )
    body = echoed(env.get("local.test", "/x?keep=1", token, headers={"x-jwt-sub": "mallory"}))
    assert body["headers"]["x-jwt-sub"] == "alice"  # the client's copy never arrives
    assert body["headers"]["x-jwt-org"] == "o-42"  # a nested claim
    assert body["headers"]["x-jwt-level"] == "3"
    assert body["headers"]["x-jwt-admin"] == "true"
    # A list (or object) arrives as base64 of its JSON (Envoy's rule).
    assert base64.b64decode(body["headers"]["x-jwt-groups"]) == b'["dev","ops"]'
    assert "authorization" not in body["headers"]  # keepToken is false by default
    assert body["query"] == "keep=1"


def test_access_token_query_parameter(env: Env) -> None:
    token = env.main.token(MAIN, sub="bob")
    body = echoed(env.get("local.test", f"/x?access_token={token}&keep=1"))
    assert body["headers"]["x-jwt-sub"] == "bob"
    assert "x-jwt-org" not in body["headers"]  # the token has no org claim
    assert body["query"] == "keep=1"  # the token is not passed upstream


def test_any_provider_of_the_host_will_do(env: Env) -> None:
    """`local.test` has an RSA provider and an EC provider: a token of either passes."""
    body = echoed(env.get("local.test", token=env.edge.token(EDGE)))
    assert "x-jwt-sub" not in body["headers"]  # that provider copies no claims


def test_route_with_jwt_disabled(env: Env) -> None:
    body = echoed(env.get("local.test", "/public", headers={"x-jwt-sub": "mallory"}))
    assert "x-jwt-sub" not in body["headers"]


def test_custom_header_prefix_and_query_parameter(env: Env) -> None:
    token = env.main.token(MAIN, aud="gw-api")
    body = echoed(env.get("custom.test", headers={"x-api-token": token}))
    assert body["headers"]["x-api-token"] == token  # keepToken: true
    echoed(env.get("custom.test", headers={"authorization": f"Token {token}"}))
    body = echoed(env.get("custom.test", f"/x?tok={token}"))
    assert body["query"] == f"tok={token}"
    # The default locations are not looked at once tokenSource is set.
    assert_denied(env.get("custom.test", token=token), 401, "Jwt is missing")


def test_wrong_audience_is_403(env: Env) -> None:
    token = env.main.token(MAIN, aud="someone-else")
    assert_denied(
        env.get("custom.test", headers={"x-api-token": token}),
        403,
        "Audiences in Jwt are not allowed",
    )


# --- attacks: none of them reaches the upstream -----------------------------------------


def attack_tokens(env: Env) -> dict[str, tuple[str, str]]:
    now_claims = env.main.token(MAIN)
    return {
        "alg none": (
            unsigned_token({"iss": MAIN, "sub": "alice"}),
            "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections",
        ),
        "HS256 with the RSA public key as secret": (
            hs256_with_public_key(env.main, {"iss": MAIN, "sub": "alice"}),
            "Jwks doesn't have key to match kid or alg from Jwt",
        ),
        "expired": (env.main.token(MAIN, exp=1_000_000), "Jwt is expired"),
        "not yet valid": (env.main.token(MAIN, nbf=4_000_000_000), "Jwt not yet valid"),
        "wrong iss": (env.main.token("https://evil.test"), "Jwt issuer is not configured"),
        "tampered payload": (tampered(now_claims, sub="root"), "Jwt verification fails"),
        "signed by another key": (env.other.token(MAIN), "Jwt verification fails"),
        "token for another provider": (env.other.token(OTHER), "Jwt issuer is not configured"),
        "malformed": ("abc.def.ghi", "Jwt header is an invalid JSON"),
    }


ATTACKS = [
    "alg none",
    "HS256 with the RSA public key as secret",
    "expired",
    "not yet valid",
    "wrong iss",
    "tampered payload",
    "signed by another key",
    "token for another provider",
    "malformed",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_attack_is_401_and_never_reaches_upstream(env: Env, attack: str) -> None:
    token, body = attack_tokens(env)[attack]
    before = env.gw.envoy_stat(ECHO_REQUESTS)
    response = env.get("local.test", token=token)
    assert_denied(response, 401, body)
    assert response.headers["www-authenticate"] == (
        'Bearer realm="http://local.test/x", error="invalid_token"'
    )
    assert env.gw.envoy_stat(ECHO_REQUESTS) == before


def test_token_for_another_provider_is_valid_there(env: Env) -> None:
    """The attack above is refused because of the host, not because the token is bad."""
    echoed(env.get("other.test", token=env.other.token(OTHER)))


def test_one_bad_token_among_good_ones_fails(env: Env) -> None:
    good, bad = env.main.token(MAIN), env.main.token(MAIN, exp=1_000_000)
    assert_denied(env.get("local.test", f"/x?access_token={bad}", good), 401, "Jwt is expired")


# --- remote key sets -----------------------------------------------------------------------


def test_remote_jwks_through_an_upstream_and_key_rotation(env: Env) -> None:
    echoed(env.get("remote.test", token=env.k1.token(REMOTE)))
    assert env.jwks.fetches >= 1
    new_key_token = env.k2.token(REMOTE)
    assert_denied(
        env.get("remote.test", token=new_key_token),
        401,
        "Jwks doesn't have key to match kid or alg from Jwt",
    )
    env.jwks.keys = [env.k1.jwk(), env.k2.jwk()]  # the provider publishes a new kid
    wait_until(
        lambda: env.get("remote.test", token=new_key_token).status_code == 200,
        timeout=10,
        what="the rotated key to be fetched",
    )
    env.jwks.keys = [env.k2.jwk()]  # ... and retires the old one
    wait_until(
        lambda: env.get("remote.test", token=env.k1.token(REMOTE, jti="fresh")).status_code == 401,
        timeout=10,
        what="the retired key to be dropped",
    )
    echoed(env.get("remote.test", token=env.k2.token(REMOTE)))


def test_unreachable_jwks_gives_401_then_recovers(env: Env) -> None:
    token = env.k1.token(REMOTE)
    assert_denied(env.get("late.test", token=token), 401, "Jwks remote fetch is failed")
    echoed(env.get("local.test", token=env.main.token(MAIN)))  # the proxy keeps working
    server = JwksServer(port=env.late_port, keys=[env.k1.jwk()])
    try:
        wait_until(
            lambda: env.get("late.test", token=token).status_code == 200,
            timeout=10,
            what="the key set to become reachable",
        )
        assert server.fetches >= 1
    finally:
        server.stop()


# --- bad configuration is a status ---------------------------------------------------------


def test_bad_jwt_configuration_is_rejected_naming_the_field(env: Env) -> None:
    bad_pem = "-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n"
    documents = [
        virtual_service(
            "bad-pem", "bad-pem.test", {"p": {"issuer": MAIN, "jwks": {"local": {"key": bad_pem}}}}
        ),
        virtual_service("bad-ref", "bad-ref.test", {"p": remote(REMOTE, "no-such-upstream")}),
        virtual_service("no-iss", "no-iss.test", {"p": local("", env.main)}),
    ]
    path = env.folder / "bad.yaml"
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    try:
        field = "spec.virtualHost.options.jwt.providers.p"
        reasons = {
            name: env.gw.wait_status(f"VirtualService default.{name}", "Rejected")["reason"]
            for name in ("bad-pem", "bad-ref", "no-iss")
        }
        assert f"{field}.jwks.local.key: failed to parse the local key" in reasons["bad-pem"]
        assert (
            f"{field}.jwks.remote.upstreamRef: *v1.Upstream {{ gw-system.no-such-upstream }} "
            "not found" in reasons["bad-ref"]
        )
        assert f"{field}.issuer: issuer is required" in reasons["no-iss"]
        assert env.get("bad-pem.test").status_code == 404  # never served, not served open
        echoed(env.get("local.test", token=env.main.token(MAIN)))
    finally:
        path.unlink()
