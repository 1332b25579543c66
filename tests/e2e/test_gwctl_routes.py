"""`gwctl create upstream static`, `create virtualservice`, `add route` and `remove route`
against a real `gw up`, as the established tool's getting-started guides use them: each
command edits the served folder, prints the resource's table with the status the control
plane gives it, and the proxy routes by the result.

One `gw up` serves the module; tests that change a user's file restore it.
"""

from __future__ import annotations

import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.e2e.test_tls import https_get
from tests.support.certs import make_ca, make_cert
from tests.support.gwctl import gwctl, ok, parse_table
from tests.support.manifests import upstream
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

SHOP = """# The shop's routes.
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200, body: shop-home}
---
# The blog.
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: blog, namespace: default}
spec:
  virtualHost:
    domains: [blog.example.com]
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200, body: blog}
"""


@dataclass
class Setup:
    gw: GwUp
    folder: Path
    echo: Echo

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return gwctl(self.gw.home, *args)

    def get(self, host: str, path: str, **headers: str) -> httpx.Response:
        return httpx.get(self.gw.url + path, headers={"host": host, **headers}, timeout=5)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("routes")
    echo = Echo(root, "echo")
    folder = root / "config"
    folder.mkdir()
    (folder / "shop.yaml").write_text(SHOP)
    (folder / "upstreams.yaml").write_text(upstream("echo", echo.port, "gw-system"))
    gw = GwUp(folder, root / "home")
    try:
        yield Setup(gw, folder, echo)
    finally:
        gw.stop()
        echo.stop()


def test_a_guides_first_steps_route_through_the_proxy(setup: Setup) -> None:
    """create upstream static, create virtualservice, add route: then the proxy routes by
    them, with the prefix rewritten and a route inserted ahead of the first."""
    made = ok(
        setup.run(
            "create", "upstream", "static", "pets",
            "--static-hosts", f"127.0.0.1:{setup.echo.port}",
        )
    )  # fmt: skip
    [row] = parse_table(made)
    assert (row["UPSTREAM"], row["TYPE"], row["STATUS"]) == (
        "pets",
        "Static",
        "Accepted",
    )
    assert f"127.0.0.1:{setup.echo.port}" in row["DETAILS"]

    made = ok(setup.run("create", "vs", "--name", "petstore", "--domains", "pets.example.com"))
    [vs] = parse_table(made)
    assert (vs["VIRTUAL SERVICE"], vs["DISPLAY NAME"], vs["DOMAINS"]) == (
        "petstore",
        "petstore",
        "pets.example.com",
    )
    assert vs["STATUS"].startswith("Warning\n") and "no routes" in vs["STATUS"]

    added = ok(
        setup.run(
            "add", "route", "--name", "petstore", "--path-prefix", "/api",
            "--dest-name", "pets", "--prefix-rewrite", "/v2",
        )
    )  # fmt: skip
    [vs] = parse_table(added)
    assert (vs["STATUS"], vs["ROUTES"]) == ("Accepted", "/api -> gw-system.pets (upstream)")
    wait_until(lambda: setup.get("pets.example.com", "/api/cats").status_code == 200)
    answer = setup.get("pets.example.com", "/api/cats").json()
    assert answer["path"] == "/v2/cats"

    # Index 0 (the default) puts the new route first: it now answers /api/special.
    added = ok(
        setup.run(
            "add", "route", "--name", "petstore", "-e", "/api/special",
            "-u", "pets", "-m", "post", "-d", "x-team=blu.*",
        )
    )  # fmt: skip
    [vs] = parse_table(added)
    assert vs["ROUTES"].splitlines() == [
        "/api/special -> gw-system.pets (upstream)",
        "/api -> gw-system.pets (upstream)",
    ]
    created = setup.folder / "gwctl-created" / "virtualservice-gw-system-petstore.yaml"
    routes = yaml.safe_load(created.read_text())["spec"]["virtualHost"]["routes"]
    assert routes[0]["matchers"] == [
        {
            "exact": "/api/special",
            "headers": [{"name": "x-team", "value": "blu.*", "regex": True}],
            "methods": ["POST"],
        }
    ]

    def special() -> str:
        response = httpx.post(
            setup.gw.url + "/api/special",
            headers={"host": "pets.example.com", "x-team": "blue"},
            timeout=5,
        )
        return str(response.json()["path"]) if response.status_code == 200 else ""

    wait_until(lambda: special() == "/api/special")  # the exact route: no rewrite
    # The header does not match: the /api route takes it and rewrites.
    other = setup.get("pets.example.com", "/api/special", **{"x-team": "red"})
    assert other.json()["path"] == "/v2/special"

    removed = ok(setup.run("remove", "route", "--name", "petstore", "-x", "1"))
    [vs] = parse_table(removed)
    assert vs["ROUTES"] == "/api/special -> gw-system.pets (upstream)"
    wait_until(lambda: setup.get("pets.example.com", "/api/cats").status_code == 404)


def test_add_route_without_a_name_makes_and_then_uses_the_default_for_any_domain(
    setup: Setup,
) -> None:
    """No --name: the namespace's virtual service for `*` takes the route, and one named
    `default` is created for `*` when there is none."""
    first = ok(setup.run("add", "route", "-p", "/first", "-u", "echo-missing"))
    [vs] = parse_table(first)
    assert (vs["VIRTUAL SERVICE"], vs["DOMAINS"]) == ("default", "*")
    assert vs["STATUS"].startswith("Warning") and "echo-missing } not found" in vs["STATUS"]

    second = ok(setup.run("add", "route", "-p", "/second", "-u", "echo", "-x", "1"))
    [vs] = parse_table(second)
    assert vs["ROUTES"].splitlines() == [
        "/first -> gw-system.echo-missing (upstream)",
        "/second -> gw-system.echo (upstream)",
    ]
    ok(setup.run("remove", "route", "--name", "default", "-x", "0"))
    wait_until(lambda: setup.get("anything.example.com", "/second/x").status_code == 200)


def test_add_route_edits_the_users_document_in_place(setup: Setup) -> None:
    """The route goes into the document that holds the virtual service; its comment and the
    file's other documents are kept, and the stored manifest (not the control plane's view
    of it, with defaults filled in) is what is written back."""
    path = setup.folder / "shop.yaml"
    try:
        added = ok(
            setup.run(
                "add", "route", "--name", "shop", "-n", "default",
                "-p", "/cart", "-u", "echo", "-s", "gw-system",
            )
        )  # fmt: skip
        [vs] = parse_table(added)
        assert vs["STATUS"] == "Accepted"
        text = path.read_text()
        # The shop's document is written anew, its comment kept; the blog's is untouched.
        assert text.startswith("# The shop's routes.\n")
        assert "---\n# The blog.\n" in text
        shop, blog = list(yaml.safe_load_all(text))
        assert blog == yaml.safe_load(SHOP.split("---\n")[1])
        assert shop["spec"]["virtualHost"]["routes"] == [
            {
                "matchers": [{"prefix": "/cart"}],
                "routeAction": {"single": {"upstream": {"name": "echo", "namespace": "gw-system"}}},
            },
            {
                "matchers": [{"prefix": "/"}],
                "directResponseAction": {"status": 200, "body": "shop-home"},
            },
        ]
        wait_until(lambda: setup.get("shop.example.com", "/cart").status_code == 200)
        assert setup.get("shop.example.com", "/").text == "shop-home"
    finally:
        path.write_text(SHOP)


def test_refusals_name_what_to_fix_and_write_nothing(setup: Setup) -> None:
    before = sorted(p.name for p in setup.folder.rglob("*.yaml"))
    cases = {
        ("add", "route", "-u", "pets"): (
            "Error: give the path to match: --path-prefix, --path-exact or --path-regex\n"
        ),
        ("add", "route", "-p", "/a", "-e", "/b", "-u", "pets"): (
            "Error: give only one of --path-prefix, --path-exact and --path-regex\n"
        ),
        ("add", "route", "-p", "/a"): (
            "Error: give the destination: --dest-name, --upstream-group-name or --delegate-name\n"
        ),
        ("add", "route", "--name", "shop", "-n", "default", "-p", "/a", "-u", "x", "-x", "5"): (
            "Error: --index 5 is past the end of the 1 routes of VirtualService default.shop\n"
        ),
        ("add", "route", "-p", "/a", "-u", "pets", "-d", "x-team"): (
            "Error: --header: 'x-team' is not key=value\n"
        ),
        ("remove", "route", "-x", "0"): (
            "Error: name of the target virtual service cannot be empty\n"
        ),
        ("remove", "route", "--name", "nope", "-x", "0"): (
            "Error: VirtualService gw-system.nope not found\n"
        ),
        ("create", "upstream", "static", "bad", "--static-hosts", "::1"): (
            "Error: --static-hosts: write an IPv6 address in brackets: [::1]:PORT\n"
        ),
        ("create", "upstream", "static", "bad"): (
            "Error: must provide at least 1 host for static upstream"
            " (--static-hosts HOST:PORT,...)\n"
        ),
        ("create", "vs", "bad", "--enable-rate-limiting", "--rate-limit-time-unit", "WEEK"): (
            "Error: invalid time unit specified: WEEK (one of SECOND, MINUTE, HOUR, DAY)\n"
        ),
        ("create", "vs", "shop", "-n", "default"): (
            "Error: VirtualService default.shop already exists (in shop.yaml, document 1)\n"
        ),
    }  # fmt: skip
    for args, error in cases.items():
        result = setup.run(*args)
        assert (result.returncode, result.stderr) == (1, error), args
    assert sorted(p.name for p in setup.folder.rglob("*.yaml")) == before


def test_routes_into_a_route_table_and_a_route_delegating_to_it(setup: Setup) -> None:
    """`--to-route-table` builds a route table; `--delegate-name` points a virtual service's
    route at it; `--dry-run` prints the changed manifest and writes nothing."""
    table = ok(
        setup.run(
            "add", "route", "--to-route-table", "--name", "team", "-n", "default",
            "-p", "/team/a", "-u", "echo",
        )
    )  # fmt: skip
    [row] = parse_table(table)
    assert (row["ROUTE TABLE"], row["ROUTES"]) == ("team", "/team/a -> gw-system.echo (upstream)")
    ok(setup.run("create", "vs", "delegating", "--domains", "team.example.com"))
    added = ok(
        setup.run(
            "add", "route", "--name", "delegating", "-p", "/team",
            "--delegate-name", "team", "--delegate-namespace", "default",
        )
    )  # fmt: skip
    [vs] = parse_table(added)
    assert vs["STATUS"] == "Accepted", vs
    wait_until(lambda: setup.get("team.example.com", "/team/a/x").status_code == 200)
    assert setup.get("team.example.com", "/team/b").status_code == 404

    stored = setup.folder / "gwctl-created" / "virtualservice-gw-system-delegating.yaml"
    before = stored.read_text()
    dry = ok(
        setup.run("add", "route", "--name", "delegating", "-p", "/dry", "-u", "echo", "--dry-run")
    )
    manifest = yaml.safe_load(dry)
    assert [r["matchers"] for r in manifest["spec"]["virtualHost"]["routes"]] == [
        [{"prefix": "/dry"}],
        [{"prefix": "/team"}],
    ]
    assert manifest["spec"]["virtualHost"]["routes"][1]["delegateAction"] == {
        "ref": {"name": "team", "namespace": "default"}
    }
    assert stored.read_text() == before


def test_route_sort_orders_a_virtual_service_most_specific_first(setup: Setup) -> None:
    """Routes added in an order that hides the specific ones behind `/`: after `route sort`
    each answers its own path."""
    ok(setup.run("create", "vs", "sorted", "--domains", "sorted.example.com"))
    for path in (("-p", "/"), ("-p", "/api"), ("-e", "/api/exact")):
        ok(setup.run("add", "route", "--name", "sorted", *path, "-u", "echo", "-x", "0"))
    ok(setup.run("add", "route", "--name", "sorted", "-p", "/", "-u", "echo", "-x", "0"))
    sorted_out = ok(setup.run("route", "sort", "--name", "sorted"))
    assert sorted_out.startswith("sorting 4 routes by:\n- exact < regex < prefix\n")
    [vs] = parse_table(sorted_out)
    assert vs["ROUTES"].splitlines() == [
        "/api/exact -> gw-system.echo (upstream)",
        "/api -> gw-system.echo (upstream)",
        "/ -> gw-system.echo (upstream)",
        "/ -> gw-system.echo (upstream)",
    ]
    refused = setup.run("route", "sort")
    assert (refused.returncode, refused.stderr) == (
        1,
        "Error: name of the target virtual service cannot be empty\n",
    )


def test_edit_virtualservice_sets_and_removes_its_tls(setup: Setup, tmp_path: Path) -> None:
    """The established TLS guide's steps: create secret tls, then edit virtualservice with
    --ssl-secret-name: the virtual host answers over HTTPS with that certificate; and
    --ssl-remove takes TLS away again."""
    ca = make_ca()
    pair = make_cert(["tls.example.com"], ca)
    (tmp_path / "cert.pem").write_text(pair.cert_pem)
    (tmp_path / "key.pem").write_text(pair.key_pem)
    ok(
        setup.run(
            "create", "secret", "tls", "--name", "site-tls", "--namespace", "default",
            "--certchain", str(tmp_path / "cert.pem"), "--privatekey", str(tmp_path / "key.pem"),
        )
    )  # fmt: skip
    ok(setup.run("create", "vs", "site", "--domains", "tls.example.com"))
    ok(setup.run("add", "route", "--name", "site", "-p", "/", "-u", "echo"))
    edited = ok(
        setup.run(
            "edit", "virtualservice", "--name", "site",
            "--ssl-secret-name", "site-tls", "--ssl-secret-namespace", "default",
        )
    )  # fmt: skip
    [vs] = parse_table(edited)
    assert (vs["SSL"], vs["STATUS"]) == ("secret_ref", "Accepted")

    def answered() -> int:
        try:
            return https_get(setup.gw.https_port, "tls.example.com", trust=ca).status
        except (ssl.SSLError, OSError):
            return 0

    wait_until(lambda: answered() == 200, what="HTTPS with the new certificate")
    reply = https_get(setup.gw.https_port, "tls.example.com", trust=ca)
    assert reply.certificate == pair.cert

    removed = ok(setup.run("edit", "vs", "site", "--ssl-remove"))
    [vs] = parse_table(removed)
    assert vs["SSL"] == "none"
    refused = setup.run("edit", "vs", "site", "--ssl-secret-namespace", "default")
    assert (refused.returncode, refused.stderr) == (
        1,
        "Error: name must be provided: give --ssl-secret-name with --ssl-secret-namespace\n",
    )
