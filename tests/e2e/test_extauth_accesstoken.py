"""`oauth2.accessTokenValidation` end to end: `gw up` with its extauth server, Envoy, an echo
app, and real servers on loopback for what the check talks to:

- `introspect.test`: the introspection guide's AuthConfig (client credentials from an OAuth
  secret, `dynamicMetadataFromClaims` read back by a transformation as the guide does),
  plus required scopes, `userIdAttributeName`, claims to headers, and `userinfoUrl` at the
  real OIDC provider (`oidc-provider-mock`), whose access tokens the test gets by a login.
  The introspection endpoint is `tests/support/introspection.py`, a test peer: the provider
  has none.
- `legacy.test`: the older `introspectionUrl` (no client authentication), `cacheTimeout: 0`.
- `local.test`: JWTs checked with an inline key set (`localJwks`), an issuer and an audience.
- `remote.test`: JWTs checked with a key set fetched from a key server (`remoteJwks`).
- `nowhere.test` / `nokeys.test`: an introspection endpoint and a key set at addresses
  nothing listens on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.support.extauth_gateway import ExtauthGateway
from tests.support.extauth_manifests import chain
from tests.support.introspection import IntrospectionServer
from tests.support.oidc_provider import OidcProvider
from tests.support.ports import free_port
from tests.support.tokens import JwksServer, SigningKey
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

CLIENT_ID, CLIENT_SECRET = "gw-introspect", "introspect-secret-value"
ISSUER = "https://tokens.example.com"
SUB_FROM_METADATA = 'dynamic_metadata("config_0:sub", "envoy.filters.http.ext_authz")'


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def introspection_config(introspection_url: str, userinfo_url: str) -> str:
    return chain(
        "introspect",
        f"""
  - name: config_0
    oauth2:
      accessTokenValidation:
        introspection:
          introspectionUrl: {introspection_url}
          clientId: {CLIENT_ID}
          clientSecretRef: {{name: introspect, namespace: gw-system}}
          userIdAttributeName: sub
        userinfoUrl: {userinfo_url}
        requiredScopes: {{scope: [read]}}
        dynamicMetadataFromClaims: {{sub: sub}}
        claimsToHeaders: [{{claim: email, header: x-email}}]""",
    )


def guide_host(domain: str) -> str:
    """The guide's VirtualService: the `sub` the check put into dynamic metadata (nested
    under the step, `config_0`) becomes `x-customer` through a transformation."""
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: introspect, namespace: default}}
spec:
  virtualHost:
    domains: ["{domain}"]
    options:
      extauth: {{configRef: {{name: introspect, namespace: gw-system}}}}
      stagedTransformations:
        regular:
          requestTransforms:
          - requestTransformation:
              transformationTemplate:
                headers:
                  x-customer:
                    text: '{{{{ {SUB_FROM_METADATA} }}}}'
    routes:
    - matchers: [{{prefix: /}}]
      routeAction: {{single: {{upstream: {{name: app, namespace: gw-system}}}}}}
"""


def provider_access_token(provider: OidcProvider, sub: str) -> str:
    """An access token the real provider issues to a client after `sub` signs in."""
    query = urlencode(
        {
            "response_type": "code",
            "client_id": "a-client",
            "redirect_uri": "http://client.test/cb",
            "scope": "openid email",
            "state": "s",
            "nonce": "n",
        }
    )
    callback = provider.login(f"{provider.issuer}/oauth2/authorize?{query}", sub)
    code = parse_qs(urlsplit(callback).query)["code"][0]
    answer = httpx.post(
        f"{provider.issuer}/oauth2/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": "http://client.test/cb",
        },
        auth=("a-client", "a-secret"),
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("accesstoken")
    provider = OidcProvider(work)
    introspection = IntrospectionServer(CLIENT_ID, CLIENT_SECRET)
    legacy = IntrospectionServer("anyone", None)
    local_key, remote_key = SigningKey(kid="local-1"), SigningKey(kind="EC", kid="remote-1")
    jwks = JwksServer(keys=[remote_key.jwk()])
    gateway = ExtauthGateway(work)
    try:
        gateway.write(
            "secret",
            f"""
apiVersion: v1
kind: Secret
metadata: {{name: introspect, namespace: gw-system}}
type: extauth.vendor.io/oauth
stringData: {{client-secret: {CLIENT_SECRET}}}
""",
        )
        gateway.write(
            "ac-introspect", introspection_config(introspection.url, provider.issuer + "/userinfo")
        )
        gateway.write(
            "ac-legacy",
            chain(
                "legacy",
                f"""
  - oauth2:
      accessTokenValidation:
        introspectionUrl: {legacy.url}
        cacheTimeout: 0s""",
            ),
        )
        local_jwks = json.dumps({"keys": [local_key.jwk()]})
        gateway.write(
            "ac-local",
            chain(
                "local",
                f"""
  - oauth2:
      accessTokenValidation:
        jwt:
          localJwks: {{inlineString: {json.dumps(local_jwks)}}}
          issuer: {ISSUER}
          audiences: [orders]
        requiredScopes: {{scope: [orders.read]}}
        claimsToHeaders: [{{claim: sub, header: x-sub}}]""",
            ),
        )
        gateway.write(
            "ac-remote",
            chain(
                "remote",
                f"""
  - oauth2:
      accessTokenValidation:
        jwt:
          remoteJwks: {{url: "http://127.0.0.1:{jwks.port}/keys", refreshInterval: 1h}}""",
            ),
        )
        gateway.write(
            "ac-down",
            chain(
                "nowhere",
                f"""
  - oauth2:
      accessTokenValidation:
        introspectionUrl: http://127.0.0.1:{free_port()}/introspect""",
            )
            + "---"
            + chain(
                "nokeys",
                f"""
  - oauth2:
      accessTokenValidation:
        jwt: {{remoteJwks: {{url: "http://127.0.0.1:{free_port()}/keys"}}}}""",
            ),
        )
        names = ("introspect", "legacy", "local", "remote", "nowhere", "nokeys")
        for name in names:
            gateway.gw.wait_status(f"AuthConfig gw-system.{name}", "Accepted")
        gateway.write("vs-introspect", guide_host("introspect.test"))
        gateway.gw.wait_status("VirtualService default.introspect", "Accepted")
        for name in ("legacy", "local", "remote", "nowhere", "nokeys"):
            gateway.guard(name, name)
        yield {
            "gateway": gateway,
            "provider": provider,
            "introspection": introspection,
            "legacy": legacy,
            "local_key": local_key,
            "remote_key": remote_key,
            "jwks": jwks,
        }
    finally:
        gateway.stop()
        jwks.stop()
        legacy.stop()
        introspection.stop()
        provider.stop()


def test_introspection_as_the_guide_writes_it(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    introspection: IntrospectionServer = env["introspection"]
    provider: OidcProvider = env["provider"]
    token = introspection.register(
        provider_access_token(provider, "alice"), sub="alice", scope="read write"
    )
    before = introspection.requests
    ok = gateway.get("introspect.test", "/headers", headers=bearer(token))
    assert ok.status_code == 200, ok.text
    seen = ok.json()["headers"]
    assert seen["x-customer"] == "alice"  # dynamic metadata under config_0, as in the guide
    assert seen["x-user-id"] == "alice"  # userIdAttributeName
    assert seen["x-email"] == "alice"  # from the provider's userinfo
    assert introspection.last_form == {"token": token, "token_type_hint": "access_token"}
    assert introspection.requests == before + 1
    again = gateway.get("introspect.test", "/headers", headers=bearer(token))
    assert again.status_code == 200 and introspection.requests == before + 1  # cached


def test_missing_invalid_or_underscoped_tokens_are_refused(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    introspection: IntrospectionServer = env["introspection"]
    provider: OidcProvider = env["provider"]
    write_only = introspection.register(
        provider_access_token(provider, "bob"), sub="bob", scope="write"
    )
    no_sub = introspection.register(provider_access_token(provider, "carol"), scope="read")
    for headers in (
        {},
        bearer("qwertyuio23456789"),
        bearer(write_only),
        bearer(no_sub),
        {"authorization": "Basic " + "dXNlcjpwYXNz"},
    ):
        refused = gateway.get("introspect.test", "/headers", headers=headers)
        assert (refused.status_code, refused.text) == (403, ""), headers
        assert "x-echo-name" not in refused.headers


def test_userinfo_refusing_the_token_refuses_the_request(env: dict[str, Any]) -> None:
    """Active at introspection, but not a token of the provider: its userinfo refuses it."""
    gateway: ExtauthGateway = env["gateway"]
    introspection: IntrospectionServer = env["introspection"]
    token = introspection.issue(sub="mallory", scope="read")
    assert gateway.get("introspect.test", "/", headers=bearer(token)).status_code == 403


def test_legacy_introspection_url_without_cache(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    legacy: IntrospectionServer = env["legacy"]
    token = legacy.issue(sub="dave")
    before = legacy.requests
    for _ in range(2):
        assert gateway.get("legacy.test", "/", headers=bearer(token)).status_code == 200
    assert legacy.requests == before + 2  # cacheTimeout: 0 asks every time
    legacy.tokens.pop(token)  # revoked at the provider
    assert gateway.get("legacy.test", "/", headers=bearer(token)).status_code == 403


def test_local_jwks_issuer_audience_and_scopes(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    key: SigningKey = env["local_key"]
    good = key.token(ISSUER, aud="orders", scope="orders.read profile", sub="erin")
    ok = gateway.get("local.test", "/", headers=bearer(good))
    assert ok.status_code == 200 and ok.json()["headers"]["x-sub"] == "erin"
    now = int(time.time())
    for refused in (
        key.token("https://other.example.com", aud="orders", scope="orders.read"),
        key.token(ISSUER, aud="billing", scope="orders.read"),
        key.token(ISSUER, aud="orders", scope="orders.write"),
        key.token(ISSUER, aud="orders", scope="orders.read", iat=now - 900, exp=now - 300),
        SigningKey(kid="local-1").token(ISSUER, aud="orders", scope="orders.read"),  # forged
        SigningKey().token(ISSUER, aud="orders", scope="orders.read"),  # no kid
    ):
        assert gateway.get("local.test", "/", headers=bearer(refused)).status_code == 403


def test_remote_jwks_is_fetched_and_rotated(env: dict[str, Any]) -> None:
    """A key the cached set lacks fetches the set again, at most once per 10 seconds."""
    gateway: ExtauthGateway = env["gateway"]
    key: SigningKey = env["remote_key"]
    jwks: JwksServer = env["jwks"]
    assert gateway.get("remote.test", "/", headers=bearer(key.token("anyone"))).status_code == 200
    assert (
        gateway.get("remote.test", "/", headers=bearer(env["local_key"].token("x"))).status_code
        == 403
    )
    rotated = SigningKey(kind="EC", kid="remote-2")
    jwks.keys = [key.jwk(), rotated.jwk()]
    before = jwks.fetches
    token = rotated.token("anyone")
    wait_until(
        lambda: gateway.get("remote.test", "/", headers=bearer(token)).status_code == 200,
        timeout=30,
        what="the rotated key to be fetched",
    )
    assert jwks.fetches == before + 1
    assert gateway.get("remote.test", "/", headers=bearer(key.token("anyone"))).status_code == 200


def test_unreachable_introspection_fails_closed(env: dict[str, Any]) -> None:
    gateway: ExtauthGateway = env["gateway"]
    legacy: IntrospectionServer = env["legacy"]
    token = legacy.issue(sub="frank")
    legacy.failing = True
    try:
        down = gateway.get("legacy.test", "/", headers=bearer(token))
    finally:
        legacy.failing = False
    assert (down.status_code, down.text) == (503, "identity provider unavailable")
    assert down.headers["retry-after"] == "5"
    assert gateway.get("legacy.test", "/", headers=bearer(token)).status_code == 200


def test_unreachable_provider_fails_closed(env: dict[str, Any]) -> None:
    """Nothing listens at the introspection endpoint or the key set's address: 503, and the
    server keeps answering the other hosts."""
    gateway: ExtauthGateway = env["gateway"]
    key: SigningKey = env["remote_key"]
    for host, token in (("nowhere.test", "some-token"), ("nokeys.test", key.token("x"))):
        down = gateway.get(host, "/", headers=bearer(token))
        assert (down.status_code, down.text) == (503, "identity provider unavailable"), host
        assert "x-echo-name" not in down.headers
    assert gateway.get("remote.test", "/", headers=bearer(key.token("x"))).status_code == 200
