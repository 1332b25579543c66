"""The console under a real `gw up` (control plane, Envoy, an echo upstream), driven by
headless Chromium: every page loads and shows what the control plane and the proxy hold;
explain is clicked through from the route tree for a JWT-protected route (401 without a
token, forwarded with one, then sent through the proxy and compared) and for a request no
host takes (404); the traffic page charts the requests the test sends, refreshed by the
page's own script.

`gw up --route-stats --console-send`: every route has statistics of its own, and explain
may send. Each page is photographed; with `GW_UPDATE_SCREENSHOTS=1` the pictures replace
those in `docs/images/` that `docs/console.md` shows.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import chromium
from tests.support.console_site import secure, shop
from tests.support.processes import Echo, GwUp
from tests.support.tokens import SigningKey
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
ISSUER = "https://issuer.example.com"

TYPO = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: blog, namespace: default}
spec:
  virtualHost:
    domains: [blog.example.com]
    routes:
      - matchers: [{prefx: /}]
        directResponseAction: {status: 200, body: blog}
"""


@dataclass
class Site:
    gw: GwUp
    key: SigningKey
    page: Page
    shots: Path

    def open(self, path: str) -> Page:
        self.page.goto(f"{self.gw.admin_url}/console/{path}")
        return self.page

    def shoot(self, name: str, *, whole: bool = False) -> None:
        """A picture of the window (`whole`: of the whole page)."""
        self.page.screenshot(path=str(self.shots / f"console-{name}.png"), full_page=whole)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("console")
    echo = Echo(root, "echo")
    key = SigningKey()
    folder = root / "config"
    folder.mkdir()
    (folder / "shop.yaml").write_text(shop(echo.port))
    (folder / "secure.yaml").write_text(secure(key.public_pem()))
    (folder / "blog.yaml").write_text(TYPO)
    shots = root / "shots"
    shots.mkdir()
    gw = GwUp(folder, root / "home", "--route-stats", "--console-send")
    try:
        gw.wait_status("VirtualService default.blog", "Rejected")
        with chromium(root / "profile") as browser:
            page = browser.new_page()
            page.set_viewport_size({"width": 1200, "height": 760})
            yield Site(gw, key, page, shots)
        if os.environ.get("GW_UPDATE_SCREENSHOTS") == "1":
            IMAGES.mkdir(exist_ok=True)
            for shot in sorted(shots.glob("*.png")):
                shutil.copyfile(shot, IMAGES / shot.name)
    finally:
        gw.stop()
        echo.stop()


def test_resources_rejected_first(site: Site) -> None:
    page = site.open("")
    first = page.locator("table.resources tbody tr").first
    expect(first.locator(".badge")).to_have_text("Rejected")
    expect(first).to_contain_text("default.blog")
    expect(first).to_contain_text("spec.virtualHost.routes[0].matchers[0].prefx: unknown field")
    expect(page.locator("table.resources tbody tr")).to_have_count(6)
    expect(page.locator(".counts")).to_contain_text("Warning 1")
    site.shoot("resources")


def test_route_tree_down_to_upstreams(site: Site) -> None:
    page = site.open("routes")
    host = page.locator("section.host", has_text="VirtualService default.shop")
    expect(host.locator(".delegation .via")).to_contain_text(
        "delegates to Accepted RouteTable default.api"
    )
    users = host.locator(".delegation li.route", has_text="prefix /api/users")
    expect(users.locator(".destinations")).to_contain_text("Accepted Upstream default.echo")
    expect(users.locator(".destinations")).to_contain_text(f"127.0.0.1:{site_echo_port(site)}")
    lost = page.locator("section.host", has_text="VirtualService default.lost")
    expect(lost.locator("h2 .badge")).to_have_text("Warning")
    expect(page.locator("section.problem")).to_contain_text("VirtualService default.blog")
    site.shoot("routes")


def site_echo_port(site: Site) -> int:
    text = site.gw.folder.joinpath("shop.yaml").read_text()
    found = re.search(r"port: (\d+)", text)
    assert found is not None
    return int(found.group(1))


def test_explain_a_jwt_protected_route_from_the_tree(site: Site) -> None:
    page = site.open("routes")
    host = page.locator("section.host", has_text="VirtualService default.secure")
    host.locator("a.explain-link").first.click()
    expect(page.locator("#url")).to_have_value("http://secure.example.com/")
    page.click("#explain")
    expect(page.locator("#outcome .summary")).to_have_text("401 Jwt is missing")
    expect(page.locator("#outcome .by")).to_have_text("decided by jwt_authn")
    filters = page.locator('dd[data-section="Filters"]')
    expect(filters).to_contain_text("no token in header Authorization")
    page.click("#send")
    expect(page.locator("#verdict")).to_have_text("The proxy answered as predicted.")
    expect(page.locator('dd[data-section="Sent"]')).to_contain_text("401 from the proxy")
    site.shoot("explain", whole=True)

    token = site.key.token(ISSUER, sub="alice")
    page.fill("#headers", f"Authorization: Bearer {token}")
    page.click("#send")
    expect(page.locator("#outcome .summary")).to_contain_text("forwarded to echo_default")
    expect(filters).to_contain_text("verified (signature checked against the local key set)")
    expect(page.locator("#verdict")).to_have_text("The proxy answered as predicted.")
    expect(page.locator('dd[data-section="Sent"]')).to_contain_text("200 from the upstream")


def test_explain_a_request_no_host_takes(site: Site) -> None:
    page = site.open("explain")
    page.fill("#url", "http://nowhere.example.com/anything")
    page.select_option("#method", "POST")
    page.click("#explain")
    expect(page.locator("#outcome .summary")).to_have_text("404")
    expect(page.locator("#outcome .by")).to_have_text("decided by no virtual host")
    expect(page.locator('dd[data-section="Virtual host"]')).to_contain_text("none")
    page.click("#send")
    expect(page.locator("#verdict")).to_have_text("The proxy answered as predicted.")
    expect(page.locator('dd[data-section="Sent"]')).to_contain_text("404 from the proxy")


def test_explain_a_bad_url_says_why(site: Site) -> None:
    page = site.open("explain")
    page.fill("#url", "ftp://shop.example.com/")
    page.click("#explain")
    expect(page.locator("#explain-error")).to_contain_text("only http and https URLs")


def test_traffic_is_charted_while_requests_flow(site: Site) -> None:
    stop = threading.Event()

    def send() -> None:
        with httpx.Client(base_url=site.gw.url, timeout=5) as client:
            while not stop.is_set():
                client.get("/api/users/1", headers={"host": "shop.example.com"})
                client.get("/", headers={"host": "secure.example.com"})  # 401

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    try:
        page = site.open("traffic")
        users = page.locator("#routes tbody tr", has_text="default_shop-route-0")

        def charted() -> bool:
            text = users.inner_text(timeout=1000)
            rate = re.search(r"([\d.]+)/s", text)
            return rate is not None and float(rate.group(1)) > 0

        wait_until(charted, timeout=40, what="the route's requests on the traffic page")
        expect(users).to_contain_text("counted by this route (sent upstream)")

        def drawn() -> bool:  # a line through a few samples (one every 2 seconds)
            points = users.locator("svg.chart polyline.rps").first.get_attribute("points")
            return points is not None and len(points.split()) >= 4

        wait_until(drawn, timeout=40, what="the route's requests charted over 4 samples")
        listener = page.locator("#listeners tbody tr").first
        wait_until(
            lambda: float(listener.locator(".e4xx-text").inner_text().rstrip("/s")) > 0,
            timeout=20,
            what="the listener's 4xx (the JWT 401s)",
        )
        assert page.locator("[data-live]").get_attribute("data-updated")  # the script ran
        site.shoot("traffic")
    finally:
        stop.set()
        sender.join(timeout=10)


def test_proxies_with_their_acknowledged_versions(site: Site) -> None:
    page = site.open("proxies")
    expect(page.locator("#proxy-resources tbody tr").first).to_contain_text("Accepted")
    client = page.locator("#clients tbody")
    for kind in ("Cluster", "Listener", "RouteConfiguration"):
        row = client.locator("tr", has_text=kind)
        expect(row.locator(".badge")).to_have_text("ACK")
    expect(page.locator("#components")).to_contain_text("gateway-proxy")
    site.shoot("proxies")
