"""The Kubernetes install's HTTP checks (`extauth.httpChecks.enabled`, on by default): the
extauth deployment answers checks over plain HTTP/1.1 as `gw up`'s server does, and every
piece that leads Envoy there agrees: the container's `--http-port`, its named port, the
Service's port, the Upstream `extauth-http` (HTTP/1.1, the shape `gw up` declares), and the
NetworkPolicy that lets only the proxies in. The chart's own resources, translated by gw
with the Endpoints the orchestrator would write for them, send basic-auth and API-key checks
to that port, and a real Envoy (`--mode validate`) accepts the result. No cluster is needed:
the chart is rendered by Helm's own engine (tests/support/deploy.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from gw import api, defaults
from gw.snapshot import Snapshot
from gw.translator.dump import xds_to_data
from gw.translator.gateway.install import declared_upstreams
from gw.translator.options import InstalledServer, Options
from gw.translator.translation import translate
from tests.support.deploy import documents, render
from tests.support.envoy_validate import envoy_refusal

HTTP_OFF = {"extauth": {"httpChecks": {"enabled": False}}}
WITH_RATE_LIMIT = {"ratelimit": {"enabled": True}, "redis": {"enabled": True}}
POD_IP = "10.0.0.7"
HTTP_CLUSTER = "extauth-http_gw-system"


def _one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _extauth_container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    spec = _one(docs, "Deployment", "extauth")["spec"]["template"]["spec"]
    return dict(spec["containers"][0])


def _http_port_arg(container: dict[str, Any]) -> int | None:
    values = [a.split("=", 1)[1] for a in container["args"] if a.startswith("--http-port=")]
    assert len(values) <= 1, container["args"]
    return int(values[0]) if values else None


def _open_ports(docs: list[dict[str, Any]], label: str) -> dict[int, list[Any]]:
    """Port → the peers allowed to reach it, over every NetworkPolicy selecting `label` pods."""
    out: dict[int, list[Any]] = {}
    for policy in (d for d in docs if d["kind"] == "NetworkPolicy"):
        selector = policy["spec"]["podSelector"]
        chosen = selector.get("matchLabels", {}).get("gw") == label or any(
            label in e["values"] for e in selector.get("matchExpressions", [])
        )
        for rule in policy["spec"].get("ingress", []) if chosen else []:
            for port in rule["ports"]:
                out.setdefault(port["port"], []).extend(rule.get("from", []))
    return out


@pytest.mark.parametrize("values", [{}, WITH_RATE_LIMIT], ids=["defaults", "with-rate-limit"])
def test_every_step_to_the_http_checks_names_the_same_port(values: dict[str, Any]) -> None:
    docs = documents(render(values))
    container = _extauth_container(docs)
    port = _http_port_arg(container)
    assert port == defaults.EXTAUTH_HTTP_PORT  # gw up's port, 8084
    named = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert named == {"grpc-extauth": defaults.EXTAUTH_PORT, "http-extauth": port}
    service = {p["name"]: p for p in _one(docs, "Service", "extauth")["spec"]["ports"]}
    assert set(service) == set(named)  # the Endpoints carry the container ports' names
    assert service["http-extauth"]["targetPort"] in (port, "http-extauth")
    upstream = api.parse_document(copy.deepcopy(_one(docs, "Upstream", "extauth-http")))
    assert isinstance(upstream, api.Upstream) and upstream.spec.orch is not None
    orch = upstream.spec.orch
    assert (orch.service_name, orch.service_namespace) == ("extauth", "gw-system")
    assert orch.service_port == service["http-extauth"]["port"]
    assert not upstream.spec.use_http2  # HTTP/1.1, as gw up's
    # Only the proxies reach it, and the extauth pods open nothing else new.
    proxies_only = [{"podSelector": {"matchLabels": {"gw": "gateway-proxy"}}}]
    opened = _open_ports(docs, "extauth")
    assert opened[port] == proxies_only
    rate_limit = [18081]  # the data-plane policy is shared with the rate-limit server
    assert sorted(opened) == sorted([defaults.EXTAUTH_PORT, port, *rate_limit])


def test_the_chart_declares_the_upstream_gw_up_declares() -> None:
    """Same name, namespace, port and protocol as `gw up`'s `extauth-http` (install.py);
    only the way to the server differs (the Service instead of a static host)."""
    server = InstalledServer("127.0.0.1", defaults.EXTAUTH_HTTP_PORT)
    (up,) = [
        u
        for u in declared_upstreams(Options(extauth_http_server=server), taken=()).values()
        if u.metadata.name.endswith(defaults.EXTAUTH_HTTP_SUFFIX)
    ]
    chart = _one(documents(render({})), "Upstream", up.metadata.name)
    assert chart["metadata"]["namespace"] == up.metadata.namespace
    assert up.spec.static is not None
    assert chart["spec"]["orch"]["servicePort"] == up.spec.static.hosts[0].port
    assert bool(chart["spec"].get("useHttp2")) == bool(up.spec.use_http2) is False


USERS = """
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {name: basic, namespace: default}
spec:
  configs:
  - basicAuth:
      realm: gw
      apr: {users: {user: {salt: TYeNoVcl, hashedPassword: HhnKGiXzbUnKT1eKo4tzy.}}}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {name: keys, namespace: default}
spec:
  configs: [{apiKeyAuth: {labelSelector: {team: a}}}]
---
apiVersion: v1
kind: Secret
metadata: {name: key-a, namespace: default, labels: {team: a}}
type: extauth.vendor.io/apikey
stringData: {api-key: a-key-of-team-a}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    options: {extauth: {configRef: {name: basic, namespace: default}}}
    domains: [shop.example.com]
    routes:
    - matchers: [{prefix: /keys}]
      directResponseAction: {status: 200}
      options: {extauth: {configRef: {name: keys, namespace: default}}}
    - matchers: [{prefix: /}]
      directResponseAction: {status: 200}
"""


def _translate(values: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The chart's Upstreams, Settings and Services, the Endpoints the orchestrator writes
    for the extauth Service (one ready pod, the Service's named ports), and a host guarded
    by basic auth and API keys, translated by gw."""
    docs = documents(render(values))
    ours = ("Upstream", "Settings", "Service")
    resources = [api.parse_document(copy.deepcopy(d)) for d in docs if d["kind"] in ours]
    container = _extauth_container(docs)
    endpoints = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "extauth", "namespace": "gw-system"},
        "subsets": [
            {
                "addresses": [{"ip": POD_IP}],
                "ports": [
                    {"name": p["name"], "port": p["containerPort"]} for p in container["ports"]
                ],
            }
        ],
    }
    resources.append(api.parse_document(endpoints))
    resources += [api.parse_document(d) for d in yaml.safe_load_all(USERS)]
    result = translate(Snapshot(resources={r.key: r for r in resources}), Options())
    for key in [r.key for r in resources if r.KIND in ("Upstream", "VirtualService", "AuthConfig")]:
        assert result.statuses[key].state == "Accepted", (key, result.statuses[key])
    return result, xds_to_data(result.xds)


def _http_services(data: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for listener in data["listeners"]:
        for chain in listener.get("filter_chains", []):
            for network in chain["filters"]:
                for http in network.get("typed_config", {}).get("http_filters", []):
                    service = http.get("typed_config", {}).get("http_service")
                    if service is not None:
                        found.append(service)
    return found


def test_the_charts_resources_send_credential_checks_to_the_http_port() -> None:
    result, data = _translate({})
    clusters = {c.name: c for c in result.proxy.clusters}
    http = clusters[HTTP_CLUSTER]
    assert not http.http2
    assert [(e.address, e.port) for e in http.endpoints] == [(POD_IP, defaults.EXTAUTH_HTTP_PORT)]
    grpc = clusters["extauth_gw-system"]
    assert grpc.http2
    assert [(e.address, e.port) for e in grpc.endpoints] == [(POD_IP, defaults.EXTAUTH_PORT)]
    services = _http_services(data)
    assert services and {s["server_uri"]["cluster"] for s in services} == {HTTP_CLUSTER}
    assert json.dumps(data["listeners"]).count('"cluster_name": "extauth_gw-system"') >= 1
    assert envoy_refusal(result.xds) is None


def test_turned_off_every_check_goes_over_grpc_and_nothing_opens_8084() -> None:
    docs = documents(render(HTTP_OFF))
    container = _extauth_container(docs)
    assert _http_port_arg(container) is None
    assert [p["containerPort"] for p in container["ports"]] == [defaults.EXTAUTH_PORT]
    service = _one(docs, "Service", "extauth")["spec"]["ports"]
    assert [p["port"] for p in service] == [defaults.EXTAUTH_PORT]
    assert not any(d["metadata"]["name"] == "extauth-http" for d in docs)
    assert defaults.EXTAUTH_HTTP_PORT not in _open_ports(docs, "extauth")
    result, data = _translate(HTTP_OFF)
    assert HTTP_CLUSTER not in {c.name for c in result.proxy.clusters}
    assert _http_services(data) == []
    assert '"cluster_name": "extauth_gw-system"' in json.dumps(data["listeners"])
