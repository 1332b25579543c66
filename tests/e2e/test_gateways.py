"""Gateways end to end: one `gw up` whose folder defines its own Gateways (so the built-in
8080/8443 ones are gone), real Envoys, real HTTP(S) on free loopback ports.

A second proxy, `edge`, runs as its own `gw proxy --name edge` process against the same
control plane: it must get only the listener of the gateway that names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from tests.e2e.test_tls import https_get
from tests.support.certs import make_ca, make_cert, tls_secret_yaml
from tests.support.gwctl import gwctl, parse_table
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp, Process, gw_command
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

CA = make_ca("gw gateways CA")


def gateway(name: str, port: int, http: str, *, ssl: bool = False, proxy: str = "") -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: {name}, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {port}
  ssl: {str(ssl).lower()}
  {f"proxyNames: [{proxy}]" if proxy else ""}
  httpGateway: {http}
"""


def virtual_service(name: str, namespace: str, domain: str, labels: str = "{}") -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: {namespace}, labels: {labels}}}
spec:
  virtualHost:
    domains: [{domain}]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: echo, namespace: gw-system}}}}}}
"""


@dataclass
class Setup:
    gw: GwUp
    folder: Path
    ports: dict[str, int]
    edge_admin: str


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("gateways")
    folder = root / "config"
    folder.mkdir()
    echo = Echo(root, "echo")
    ports = {name: free_port() for name in ("label", "namespace", "list", "tls", "edge")}
    secure = make_cert(["secure.test"], CA)
    (folder / "upstream.yaml").write_text(
        f"""apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: echo, namespace: gw-system}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {echo.port}}}]
"""
    )
    (folder / "services.yaml").write_text(
        "---".join(
            [
                virtual_service("shop", "default", "shop.test", "{team: shop}"),
                virtual_service("blog", "blog", "blog.test"),
                virtual_service("admin", "default", "admin.test"),
                virtual_service("secure", "default", "secure.test")
                + "  sslConfig: {secretRef: {name: secure-tls, namespace: default}}\n",
            ]
        )
    )
    (folder / "secret.yaml").write_text(tls_secret_yaml("secure-tls", "default", secure))
    (folder / "gateways.yaml").write_text(
        "---".join(
            [
                gateway("by-label", ports["label"], "{virtualServiceSelector: {team: shop}}"),
                gateway("by-namespace", ports["namespace"], "{virtualServiceNamespaces: [blog]}"),
                gateway(
                    "by-list",
                    ports["list"],
                    "{virtualServices: [{name: admin, namespace: default}]}",
                ),
                gateway("tls", ports["tls"], "{}", ssl=True),
                gateway("edge", ports["edge"], "{virtualServices: [{name: blog, namespace: blog}]}",
                        proxy="edge"),
            ]
        )
    )  # fmt: skip
    gw = GwUp(folder, root / "home")
    edge_admin_port = free_port()
    edge = Process(
        gw_command(
            "proxy",
            "--xds",
            f"127.0.0.1:{gw.xds_port}",
            "--admin-port",
            str(edge_admin_port),
            "--name",
            "edge",
            "--concurrency",
            "1",
        ),
        gw.env,
        root / "edge-proxy.log",
    )
    edge_admin = f"http://127.0.0.1:{edge_admin_port}"
    try:
        wait_until(
            lambda: httpx.get(edge_admin + "/ready", timeout=1).status_code == 200,
            timeout=30,
            what="the edge proxy to be ready",
        )
        yield Setup(gw, folder, ports, edge_admin)
    finally:
        edge.stop()
        gw.stop()
        echo.stop()


def get(port: int, host: str) -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{port}/x", headers={"host": host}, timeout=5)


def served_listeners(admin_url: str) -> list[str]:
    dump = httpx.get(admin_url + "/config_dump", params={"resource": "dynamic_listeners"})
    # No dynamic listener at all: Envoy leaves `configs` out. Draining ones do not count.
    return sorted(e["name"] for e in dump.json().get("configs", []) if "active_state" in e)


def test_label_selector_serves_only_its_virtual_services(setup: Setup) -> None:
    port = setup.ports["label"]
    wait_until(lambda: get(port, "shop.test").status_code == 200, what="the by-label listener")
    assert get(port, "shop.test").headers["x-echo-name"] == "echo"
    assert get(port, "blog.test").status_code == 404
    assert get(port, "admin.test").status_code == 404


def test_namespace_selection_serves_only_that_namespace(setup: Setup) -> None:
    port = setup.ports["namespace"]
    assert get(port, "blog.test").status_code == 200
    assert get(port, "shop.test").status_code == 404


def test_explicit_list_serves_only_the_listed_virtual_services(setup: Setup) -> None:
    port = setup.ports["list"]
    assert get(port, "admin.test").status_code == 200
    assert get(port, "shop.test").status_code == 404
    assert get(port, "blog.test").status_code == 404


def test_ssl_gateway_serves_the_tls_virtual_service_only(setup: Setup) -> None:
    reply = https_get(setup.ports["tls"], "secure.test", trust=CA)
    assert reply.status == 200 and reply.headers["x-echo-name"] == "echo"
    names = reply.certificate.subject.rfc4514_string()
    assert "secure.test" in names
    # Plain virtual services are not on the ssl gateway, and the TLS one on no plain one.
    for port in (setup.ports["label"], setup.ports["namespace"], setup.ports["list"]):
        assert get(port, "secure.test").status_code == 404


def test_each_proxy_gets_only_its_gateways_listeners(setup: Setup) -> None:
    gw, ports = setup.gw, setup.ports
    default = served_listeners(gw.proxy_admin_url)
    assert default == sorted(
        f"listener-127.0.0.1-{ports[name]}" for name in ("label", "namespace", "list", "tls")
    )
    assert served_listeners(setup.edge_admin) == [f"listener-127.0.0.1-{ports['edge']}"]
    assert get(ports["edge"], "blog.test").status_code == 200
    assert get(ports["edge"], "shop.test").status_code == 404
    # The default proxy's Envoy has nothing on the edge port, and vice versa.
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{gw.http_port}/", timeout=2)
    blog = gw.wait_status("VirtualService blog.blog", "Accepted")
    assert sorted(blog["subresourceStatuses"]) == [
        "*v1.Proxy.edge_gw-system",
        "*v1.Proxy.gateway-proxy_gw-system",
    ]
    shop = gw.wait_status("VirtualService default.shop", "Accepted")
    assert list(shop["subresourceStatuses"]) == ["*v1.Proxy.gateway-proxy_gw-system"]


def test_gwctl_get_proxy_shows_listeners_and_status(setup: Setup) -> None:
    home, ports = setup.gw.home, setup.ports
    result = gwctl(home, "get", "proxy", "-o", "yaml")
    assert result.returncode == 0, result.stderr
    proxies = {p["metadata"]["name"]: p for p in yaml.safe_load_all(result.stdout)}
    assert sorted(proxies) == ["edge", "gateway-proxy"]
    edge = proxies["edge"]
    assert edge["apiVersion"] == "gw.vendor.io/v1" and edge["kind"] == "Proxy"
    assert edge["status"]["statuses"]["gw-system"]["state"] == "Accepted"
    (listener,) = edge["spec"]["listeners"]
    assert listener["name"] == f"listener-127.0.0.1-{ports['edge']}"
    assert (listener["bindAddress"], listener["bindPort"]) == ("127.0.0.1", ports["edge"])
    assert listener["metadataStatic"]["sources"] == [
        {"resourceKind": "*v1.Gateway", "resourceRef": {"name": "edge", "namespace": "gw-system"}}
    ]
    (vhost,) = listener["httpListener"]["virtualHosts"]
    assert vhost["name"] == "blog_blog" and vhost["domains"][0] == "blog.test"
    tls = next(
        lis for lis in proxies["gateway-proxy"]["spec"]["listeners"] if "sslConfigurations" in lis
    )
    assert tls["sslConfigurations"][0]["serverNames"] == ["secure.test"]
    table = parse_table(gwctl(home, "get", "proxy").stdout)
    rows = {r["PROXY NAME"]: r for r in table}
    assert rows["edge"]["LISTENERS"] == f"127.0.0.1:{ports['edge']}"
    assert rows["edge"]["STATUS"] == "Accepted"
    served = gwctl(home, "proxy", "served-config", "--name", "edge", "-o", "json")
    assert served.returncode == 0, served.stderr
    config = json.loads(served.stdout)
    assert config["role"] == "gw-system~edge"
    assert [lis["name"] for lis in config["listeners"]] == [f"listener-127.0.0.1-{ports['edge']}"]
    gateways = parse_table(gwctl(home, "get", "gateways").stdout)
    assert {r["GATEWAY"]: r["STATUS"] for r in gateways} == {
        "by-label": "Accepted",
        "by-list": "Accepted",
        "by-namespace": "Accepted",
        "edge": "Accepted",
        "tls": "Accepted",
    }


def test_bad_and_conflicting_gateways_get_statuses_and_the_rest_keeps_serving(
    setup: Setup,
) -> None:
    gw, folder, ports = setup.gw, setup.folder, setup.ports
    bad = folder / "bad.yaml"
    bad.write_text(
        gateway("clash", ports["label"], "{}")
        + "---"
        + gateway("no-ip", free_port(), "{}").replace("127.0.0.1", "localhost")
        + "---"
        + gateway("listed", free_port(), "{virtualServices: [{name: gone}]}")
    )
    try:
        clash = gw.wait_status("Gateway gw-system.clash", "Rejected")
        assert f"port {ports['label']} is shared by listeners" in clash["reason"]
        # The gateway that held the port was accepted before: it keeps serving.
        assert gw.wait_status("Gateway gw-system.by-label", "Rejected")
        assert get(ports["label"], "shop.test").status_code == 200
        no_ip = gw.wait_status("Gateway gw-system.no-ip", "Rejected")
        assert "bindAddress localhost is not a valid IP address" in no_ip["reason"]
        listed = gw.wait_status("Gateway gw-system.listed", "Warning")
        assert "invalid virtual service ref gw-system.gone" in listed["reason"]
        proxies = gw.admin("/snapshots/proxy-resources")
        default = next(p for p in proxies if p["metadata"]["name"] == "gateway-proxy")
        status = default["status"]["statuses"]["gw-system"]
        assert status["state"] == "Rejected" and "BindPortNotUniqueError" in status["reason"]
        check = gwctl(gw.home, "check", "-x", "deployments,pods")
        assert check.returncode == 1
        assert "Found rejected proxy: gw-system gateway-proxy" in check.stderr
    finally:
        bad.unlink()
    gw.wait_status("Gateway gw-system.by-label", "Accepted")
    proxies = gw.admin("/snapshots/proxy-resources")
    assert all(p["status"]["statuses"]["gw-system"]["state"] == "Accepted" for p in proxies), (
        json.dumps(proxies)[:2000]
    )


def test_gwctl_translate_shows_every_proxy(setup: Setup) -> None:
    """Offline (no control plane): the default proxy as before, and every proxy by name."""
    result = gwctl(
        setup.gw.home, "translate", "-f", str(setup.folder), "--to", "proxy,xds", "-o", "json"
    )
    data = json.loads(result.stdout)
    assert data["proxy"]["name"] == "gateway-proxy"
    assert sorted(data["proxies"]) == ["edge", "gateway-proxy"]
    edge_listeners = data["served"]["gw-system~edge"]["listeners"]
    assert [lis["name"] for lis in edge_listeners] == [f"listener-127.0.0.1-{setup.ports['edge']}"]


def test_envoy_of_a_proxy_no_gateway_names_keeps_running_empty(setup: Setup) -> None:
    """Moving the edge gateway to another proxy (`standby`, no Envoy runs it): the edge
    Envoy is served an empty configuration (no listener, still alive and ready); moving it
    back restores it. (Moving a port between two Envoys of one host races on the bind;
    proxies are separate pods in a cluster, so that is not what this checks.)"""
    folder, ports = setup.folder, setup.ports
    path = folder / "gateways.yaml"
    original = path.read_text()
    path.write_text(original.replace("proxyNames: [edge]", "proxyNames: [standby]"))
    try:
        wait_until(lambda: served_listeners(setup.edge_admin) == [], what="edge to be emptied")
        assert httpx.get(setup.edge_admin + "/ready", timeout=2).status_code == 200
        names = [p["metadata"]["name"] for p in setup.gw.admin("/snapshots/proxy-resources")]
        assert names == ["gateway-proxy", "standby"]
    finally:
        path.write_text(original)
    wait_until(
        lambda: served_listeners(setup.edge_admin) == [f"listener-127.0.0.1-{ports['edge']}"],
        what="edge to get its listener back",
    )
    wait_until(lambda: get(ports["edge"], "blog.test").status_code == 200, what="edge to serve")
