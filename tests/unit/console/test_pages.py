"""The console's pages rendered from a real control plane: every page answers with strict
headers, resources come rejected first, every user-written string is escaped (a resource
name, a status reason, a header typed into explain), the route tree shows delegation down
to upstreams with statuses, and explain shows what `gwctl explain` would."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from gw.admin.server import status_rows
from gw.console import routetree
from gw.console.explaining import ServedProxies
from gw.console.options import ConsoleOptions
from tests.support.console_site import XSS, shop
from tests.unit.console.conftest import Console, start

PAGES = ("", "routes", "explain", "traffic", "proxies")


async def explain(console: Console, **fields: str) -> str:
    page = (await console.page("explain")).text
    match = re.search(r'name="token" value="([^"]+)"', page)
    assert match is not None
    response = await console.client.post(
        "/console/explain", data={"token": match.group(1), "method": "GET", **fields}
    )
    assert response.status_code == 200, response.text
    return response.text


def lines(page: str, section: str) -> list[str]:
    """The lines of one section of an explanation, unescaped."""
    match = re.search(rf'<dd data-section="{re.escape(section)}">(.*?)</dd>', page, re.S)
    assert match is not None, f"no section {section}"
    return [html.unescape(m) for m in re.findall(r'<div class="line[^"]*">(.*?)</div>', match[1])]


@pytest.mark.parametrize("path", PAGES)
async def test_every_page_renders_with_strict_headers(console: Console, path: str) -> None:
    response = await console.page(path)
    assert response.headers["content-type"].startswith("text/html")
    assert "script-src" not in response.headers["content-security-policy"]  # 'self' only
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"
    assert '<link rel="stylesheet" href="static/console.css">' in response.text
    assert "<script>" not in response.text  # no inline script: the one script is a file


async def test_static_files_are_served(console: Console) -> None:
    css = await console.client.get("/console/static/console.css")
    script = await console.client.get("/console/static/console.js")
    assert css.status_code == script.status_code == 200
    assert 'searchParams.set("part", "live")' in script.text


async def test_the_admin_index_lists_the_console(console: Console) -> None:
    index = await console.client.get("/")
    assert '<a href="/console/">/console/</a>' in index.text


async def test_resources_come_rejected_first_then_warnings(console: Console) -> None:
    page = (await console.page("")).text
    states = re.findall(r'<tr class="row-(\w+)">', page)
    assert states == sorted(states, key=["rejected", "warning", "pending", "accepted"].index)
    assert states[0] == "rejected" and "warning" in states and states[-1] == "accepted"
    names = re.findall(r'<td class="name">(.*?)</td>', page)
    # Within a state: by kind (RouteTable, Upstream, VirtualService), namespace, name.
    assert names[-4:] == ["default.api", "default.echo", "default.secure", "default.shop"]
    assert "default.lost" in names  # Warning: its upstream does not exist
    assert "Manifests that cannot be read" in page and "broken.yaml" in page


async def test_a_hostile_name_and_reason_are_escaped(console: Console) -> None:
    statuses = console.controlplane.store.statuses.all()
    assert any(key.name == XSS for key in statuses)  # the store kept the name as written
    for path in PAGES:
        page = (await console.page(path)).text
        assert "<img" not in page, path
    page = (await console.page("")).text
    assert html.escape(XSS, quote=False) in page  # shown, as text


async def test_resources_filter_by_kind_state_and_text(console: Console) -> None:
    page = (await console.page("", params={"kind": "RouteTable"})).text
    assert re.findall(r'<td class="name">(.*?)</td>', page) == ["default.api"]
    page = (await console.page("", params={"state": "Warning"})).text
    assert re.findall(r'<td class="name">(.*?)</td>', page) == ["default.lost"]
    page = (await console.page("", params={"q": "SECURE.yaml"})).text
    assert re.findall(r'<td class="name">(.*?)</td>', page) == ["default.secure"]


async def test_the_route_tree_follows_delegation_down_to_upstreams(console: Console) -> None:
    page = html.unescape((await console.page("routes")).text)
    site = page[page.index("VirtualService default.shop") :]
    line = next(i for i, text in enumerate(shop(9).splitlines(), 1) if "prefix: /api}" in text)
    delegation = site.index(f"spec.virtualHost.routes[0] (shop.yaml:{line}) delegates to")
    table = site.index("RouteTable default.api", delegation)
    users = site.index("prefix /api/users", table)
    assert site.index("Upstream default.echo", users) > users
    assert "spec.routes[0].matchers[0] (shop.yaml:" in site
    assert "answers 200 'home'" in site
    assert 'href="explain?method=GET&url=http%3A//shop.example.com/api/users"' in site
    # A host whose upstream does not exist: the route is there, the cluster is not served.
    lost = page[page.index("VirtualService default.lost") :]
    assert "not served: Envoy answers 503" in lost
    # A VirtualService never accepted serves nothing, and says why.
    nothing = page[page.index("Virtual services that serve nothing") :]
    assert "not a valid name" in nothing


async def test_explain_a_jwt_protected_route(console: Console) -> None:
    page = await explain(console, url="http://secure.example.com/admin")
    assert re.search(r'<span class="summary">401 Jwt is missing</span>', page)
    assert lines(page, "Route")[1].startswith(
        "written in VirtualService default.secure spec.virtualHost.routes[0].matchers[0] "
        "(secure.yaml:"
    )
    assert "     → responds 401 Jwt is missing" in lines(page, "Filters")


async def test_explain_a_request_no_host_takes(console: Console) -> None:
    page = await explain(console, url="http://nowhere.example.com/")
    assert '<span class="summary">404</span>' in page
    assert '<span class="by">decided by no virtual host</span>' in page


async def test_explain_escapes_what_the_user_typed(console: Console) -> None:
    page = await explain(
        console, url="http://shop.example.com/flag", headers=f"x-flag: {XSS}\nx-other: 1"
    )
    assert "<img" not in page
    assert f">x-flag: {html.escape(XSS)}\nx-other: 1</textarea>" in page  # the form, filled
    (why,) = [line for line in lines(page, "No route matches") if "✗ header x-flag" in line]
    assert why == f"  ✗ header x-flag exact 'yes' (sent: '{XSS}')"  # as text


async def test_explain_refuses_a_form_from_elsewhere(console: Console) -> None:
    for data in ({"url": "http://shop.example.com/"}, {"url": "http://x/", "token": "forged"}):
        response = await console.client.post("/console/explain", data=data)
        assert response.status_code == 403
        assert "not sent from this console" in response.text


async def test_explain_never_sends_unless_the_install_allows_it(console: Console) -> None:
    page = (await console.page("explain")).text
    assert 'name="send"' not in page and "Nothing is sent." in page
    answered = await explain(console, url="http://shop.example.com/", send="1")
    assert '<span class="summary">200 home</span>' in answered
    assert 'data-section="Sent"' not in answered


async def test_explain_form_is_filled_from_the_query(console: Console) -> None:
    page = (await console.page("explain", params={"url": "http://a.test/x", "method": "post"})).text
    assert 'value="http://a.test/x"' in page and "<option selected>POST</option>" in page
    assert 'id="outcome"' not in page  # a GET only fills the form


async def test_live_parts_render_alone(console: Console) -> None:
    response = await console.page("", params={"part": "live", "state": "Rejected"})
    assert "<html" not in response.text and '<tr class="row-rejected">' in response.text


async def test_traffic_says_where_numbers_are_not_available(console: Console) -> None:
    page = (await console.page("traffic")).text
    assert 'id="unavailable"' in page
    assert "does not reach its proxies' admin interface" in page


async def test_proxies_lists_the_proxy_and_no_connection(console: Console) -> None:
    page = html.unescape((await console.page("proxies")).text)
    assert re.search(r"Accepted</span></td><td class=\"name\">gw-system.gateway-proxy", page)
    assert "No proxy is connected." in page
    assert "1 translation, 0 failed" in page


async def test_send_button_when_the_install_allows_it(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(shop(9))
    _, client = await start(tmp_path, ConsoleOptions(send_host="127.0.0.1"))
    async with client:
        page = (await client.get("/console/explain")).text
    assert 'name="send" value="1"' in page and "read and send" in page


async def test_the_route_tree_finds_a_host_and_shows_a_bounded_number(console: Console) -> None:
    page = html.unescape((await console.page("routes", params={"q": "SECURE.example"})).text)
    assert "VirtualService default.secure" in page and "VirtualService default.shop" not in page
    nothing = page[page.index("Virtual services that serve nothing") :]
    assert "VirtualService default.shop" not in nothing  # filtered out, still served

    result = console.controlplane.result
    assert result is not None
    inputs = status_rows(console.controlplane)["inputs"]
    served = ServedProxies(console.folder).served(result, result.proxy, inputs)
    tree = routetree.build_tree(served, {}, shown=1)
    assert (len(tree.hosts), tree.matched) == (1, 3)  # secure, shop, lost
    assert tree.served == {f"VirtualService default.{n}" for n in ("secure", "shop", "lost")}
