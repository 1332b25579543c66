"""`gcp` Upstreams end to end: `gw up` with real Envoy sends requests to a Google Cloud
service over TLS with an identity token from the metadata server and the service's Host.

The service is `gw echo` serving HTTPS on loopback with a certificate for `localhost`
(verified: the upstream's `sslConfig` names the test CA), reached as `host: localhost:PORT`.
Google's metadata server runs only on Google Cloud: a stand-in on loopback answers for it
(`tests/support/gcp_metadata.py`), and `gw up --gcp-metadata-server` points the proxies at
it. Everything else is real: the tokens reach the service through Envoy's gcp_authn filter.
What this cannot show is Google's side: that Cloud Run accepts the token.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.certs import make_ca, make_cert
from tests.support.gcp_metadata import IDENTITY_PATH, MetadataServer
from tests.support.processes import Echo, GwUp

pytestmark = pytest.mark.e2e

REFUSED = "https://refused.example.com"
CUSTOM = "https://orders.example.com"


@dataclass
class Env:
    gw: GwUp
    metadata: MetadataServer
    service: Echo
    plain: Echo

    @property
    def service_host(self) -> str:
        return f"localhost:{self.service.port}"

    def get(self, path: str, **headers: str) -> tuple[httpx.Response, dict[str, Any]]:
        response = self.gw.get(path, host="shop.example.com", headers=headers)
        assert response.status_code == 200, response.text
        return response, response.json()


def gcp_upstream(name: str, port: int, audience: str | None = None) -> str:
    """A `gcp` upstream on the loopback service, its certificate verified by the test CA."""
    extra = f", audience: {audience}" if audience else ""
    return (
        f"apiVersion: gw.vendor.io/v1\nkind: Upstream\n"
        f"metadata: {{name: {name}, namespace: default}}\nspec:\n"
        f'  gcp: {{host: "localhost:{port}"{extra}}}\n'
        "  sslConfig: {secretRef: {name: service-ca, namespace: default}}\n---\n"
    )


def manifests(service_port: int, plain_port: int, ca_pem: str) -> str:
    ca = "\n".join(f"    {line}" for line in ca_pem.strip().splitlines())
    upstreams = (
        gcp_upstream("hello", service_port)
        + gcp_upstream("orders", service_port, CUSTOM)
        + gcp_upstream("refused", service_port, REFUSED)
    )
    return f"""
apiVersion: v1
kind: Secret
metadata: {{name: service-ca, namespace: default}}
type: Opaque
stringData:
  ca.crt: |
{ca}
---
{upstreams}apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: plain, namespace: default}}
spec:
  static: {{hosts: [{{addr: 127.0.0.1, port: {plain_port}}}]}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: shop, namespace: default}}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{{prefix: /hello}}]
        routeAction: {{single: {{upstream: {{name: hello}}}}}}
      - matchers: [{{prefix: /orders}}]
        routeAction: {{single: {{upstream: {{name: orders}}}}}}
      - matchers: [{{prefix: /refused}}]
        routeAction: {{single: {{upstream: {{name: refused}}}}}}
      - matchers: [{{prefix: /split}}]
        routeAction:
          multi:
            destinations:
              - {{weight: 1, destination: {{upstream: {{name: hello}}}}}}
              - {{weight: 1, destination: {{upstream: {{name: plain}}}}}}
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: plain}}}}}}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    work = tmp_path_factory.mktemp("gcp")
    ca = make_ca()
    pair = make_cert(["localhost"], ca)
    (work / "tls.crt").write_text(pair.cert_pem)
    (work / "tls.key").write_text(pair.key_pem)
    tls = ("--tls-cert", str(work / "tls.crt"), "--tls-key", str(work / "tls.key"))
    service, plain = Echo(work, "cloud-run", *tls), Echo(work, "plain")
    metadata = MetadataServer(refused=frozenset({REFUSED}))
    folder = work / "config"
    folder.mkdir()
    (folder / "shop.yaml").write_text(manifests(service.port, plain.port, ca.cert_pem))
    try:
        gw = GwUp(folder, work / "home", "--gcp-metadata-server", f"127.0.0.1:{metadata.port}")
        try:
            gw.wait_status("VirtualService default.shop", "Accepted")
            yield Env(gw, metadata, service, plain)
        finally:
            gw.stop()
    finally:
        metadata.stop()
        service.stop()
        plain.stop()


def test_the_service_gets_an_identity_token_for_its_url_and_its_own_host(env: Env) -> None:
    audience = f"https://{env.service_host}"
    response, echoed = env.get("/hello/world?x=1", authorization="Bearer from-the-client")
    assert response.headers["x-echo-name"] == "cloud-run"
    assert echoed["scheme"] == "https"  # TLS, the service's certificate verified
    assert echoed["path"] == "/hello/world" and echoed["query"] == "x=1"
    # The token the metadata server minted for the service's URL replaces the client's.
    assert echoed["headers"]["authorization"] == f"Bearer {env.metadata.tokens[audience]}"
    assert echoed["headers"]["host"] == env.service_host
    (asked,) = env.metadata.asked_for(audience)
    assert asked.path == f"{IDENTITY_PATH}?audience={audience}"
    assert asked.headers["metadata-flavor"] == "Google"
    assert asked.headers["host"] == "metadata.google.internal"
    assert "x-forwarded-for" not in asked.headers  # the metadata server refuses those

    # The token is kept until it expires: no second request to the metadata server.
    _, again = env.get("/hello/again")
    assert again["headers"]["authorization"] == echoed["headers"]["authorization"]
    assert len(env.metadata.asked_for(audience)) == 1


def test_a_custom_audience_is_the_one_asked_for(env: Env) -> None:
    _, echoed = env.get("/orders/1")
    assert echoed["headers"]["authorization"] == f"Bearer {env.metadata.tokens[CUSTOM]}"
    assert echoed["headers"]["host"] == env.service_host
    assert len(env.metadata.asked_for(CUSTOM)) == 1


def test_other_clusters_get_no_token_and_keep_the_clients_host(env: Env) -> None:
    before = len(env.metadata.requests)
    response, echoed = env.get("/other", authorization="Bearer from-the-client")
    assert response.headers["x-echo-name"] == "plain"
    assert echoed["headers"]["authorization"] == "Bearer from-the-client"
    assert echoed["headers"]["host"] == "shop.example.com"
    assert len(env.metadata.requests) == before


def test_in_a_split_only_the_gcp_destination_is_rewritten_and_given_a_token(env: Env) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(40):
        response, echoed = env.get("/split")
        seen[response.headers["x-echo-name"]] = echoed["headers"]
        if len(seen) == 2:
            break
    assert seen["cloud-run"]["host"] == env.service_host
    assert seen["cloud-run"]["authorization"].startswith("Bearer ey")
    assert seen["plain"]["host"] == "shop.example.com"
    assert "authorization" not in seen["plain"]


def test_without_a_token_the_request_goes_on_without_one(env: Env) -> None:
    """The metadata server refuses the audience: Envoy sends the request anyway, without a
    token (the real service then answers 401 or 403), and asks again next time."""
    _, echoed = env.get("/refused")
    assert "authorization" not in echoed["headers"]
    assert echoed["headers"]["host"] == env.service_host
    asked = len(env.metadata.asked_for(REFUSED))
    assert asked >= 1
    env.get("/refused")
    assert len(env.metadata.asked_for(REFUSED)) > asked


def test_the_upstreams_are_accepted(env: Env) -> None:
    for name in ("hello", "orders", "refused"):
        status = env.gw.status(f"Upstream default.{name}")
        assert status is not None and status["state"] == "Accepted"
