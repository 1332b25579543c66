"""A browser loads an HTTPS page through gw: Debian's headless Chromium (Playwright), a
self-signed certificate in a TLS secret, the page served by a `gw echo` upstream.

(a) Told to trust the certificate (its public key on `--ignore-certificate-errors-spki-list`),
    Chromium loads the page and sees the upstream's answer.
(b) Not told, Chromium refuses the certificate (SPEC.md, Errors: the browser-side
    `ERR_CERT_*` error; for an unknown issuer Chromium says `ERR_CERT_AUTHORITY_INVALID`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.support.browser import chromium, spki_hash
from tests.support.certs import KeyPair, make_cert, tls_secret_yaml
from tests.support.processes import Echo, GwUp

pytestmark = pytest.mark.e2e

HOST = "app.test"


@dataclass
class Site:
    gw: GwUp
    certificate: KeyPair
    work: Path

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.gw.https_port}/hello?from=browser"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    work = tmp_path_factory.mktemp("tls-browser")
    echo = Echo(work, "app")
    folder = work / "config"
    folder.mkdir()
    certificate = make_cert([HOST])  # self-signed: no CA any browser knows
    (folder / "app.yaml").write_text(
        f"""apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: app, namespace: gw-system}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {echo.port}}}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: app, namespace: default}}
spec:
  virtualHost:
    domains: [{HOST}]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: app, namespace: gw-system}}}}}}
  sslConfig:
    secretRef: {{name: app-tls, namespace: default}}
---
{tls_secret_yaml("app-tls", "default", certificate)}"""
    )
    gw = GwUp(folder, work / "home")
    try:
        yield Site(gw, certificate, work)
    finally:
        gw.stop()
        echo.stop()


def test_browser_told_to_trust_the_certificate_loads_the_page(site: Site) -> None:
    with chromium(
        site.work / "profile-trusting",
        host_resolver_rules=[f"MAP {HOST} 127.0.0.1"],
        trusted_spki=[spki_hash(site.certificate.cert)],
    ) as browser:
        page = browser.new_page()
        response = page.goto(site.url)
        assert response is not None
        assert response.status == 200
        assert response.headers["x-echo-name"] == "app"
        echoed = response.json()
        assert echoed["path"] == "/hello" and echoed["query"] == "from=browser"
        assert echoed["headers"]["x-forwarded-proto"] == "https"
        assert echoed["headers"]["host"] == f"{HOST}:{site.gw.https_port}"
        assert '"name":"app"' in page.inner_text("body").replace(" ", "")


def test_browser_not_told_to_trust_it_refuses(site: Site) -> None:
    with chromium(
        site.work / "profile-default", host_resolver_rules=[f"MAP {HOST} 127.0.0.1"]
    ) as browser:
        page = browser.new_page()
        with pytest.raises(PlaywrightError) as refused:
            page.goto(site.url)
        assert "net::ERR_CERT_AUTHORITY_INVALID" in str(refused.value)
