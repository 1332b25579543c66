"""The files under `deploy/`: CRDs generated from the models and current; the Helm chart,
rendered by Helm's own engine, and the plain manifests (that chart rendered) valid against
the orchestrator's OpenAPI schemas (`kubernetes-validate`), with least-privilege RBAC and the
ports of REFERENCE.md §8.1. No cluster is needed: everything is checked offline."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import typer
import yaml

from gw import __version__, api
from gw.api.crd import CRD_KINDS, all_crds, crd_name, render
from gw.certgen import parties
from gw.cli.gw import app
from gw.orch.certgen import secret_name
from gw.snapshot import Snapshot
from gw.translator.dump import xds_to_data
from gw.translator.options import Options
from gw.translator.translation import translate
from tests.support.deploy import CHART, CRDS, MANIFESTS, documents, plain_manifests
from tests.support.deploy import render as render_chart

ROOT = Path(__file__).resolve().parents[2]
K8S = kubernetes_validate.latest_version()
VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "plain": {"namespace": {"create": True}},
    "watch-namespaces": {"watchNamespaces": ["team-a", "team-b"]},
    "redis-no-webhook": {"redis": {"enabled": True}, "webhook": {"enabled": False}},
    "scaled": {"gatewayProxy": {"replicas": 3}, "controlPlane": {"replicas": 2}},
    "everything": {"ratelimit": {"enabled": True}, "redis": {"enabled": True}},
    "plaintext-xds": {"xds": {"tls": False}, "networkPolicy": {"enabled": False}},
    "extauth-grpc-only": {"extauth": {"httpChecks": {"enabled": False}}},
}


# --- CRDs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", [CRDS, CHART / "crds"], ids=["deploy-crds", "chart-crds"])
def test_committed_crds_are_current(folder: Path) -> None:
    expected = {f"{name}.yaml": render(d) for name, d in all_crds().items()}
    found = {p.name: p.read_text() for p in folder.glob("*.yaml")}
    assert found == expected, "stale: run `gw crds --out deploy/crds --out deploy/helm/gw/crds`"


@pytest.mark.parametrize("name", list(all_crds()))
def test_crd_is_valid_for_the_orchestrator(name: str) -> None:
    kubernetes_validate.validate(all_crds()[name], K8S, strict=True)


def _walk(node: dict[str, Any], path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = [(path, node)]
    for key, child in node.get("properties", {}).items():
        found += _walk(child, f"{path}.{key}")
    if isinstance(node.get("additionalProperties"), dict):
        found += _walk(node["additionalProperties"], f"{path}.*")
    if isinstance(node.get("items"), dict):
        found += _walk(node["items"], f"{path}[]")
    return found


@pytest.mark.parametrize("name", list(all_crds()))
def test_crd_schema_is_structural(name: str) -> None:
    """The rules the API server enforces for a CRD's schema (no $ref, a type everywhere...)."""
    version = all_crds()[name]["spec"]["versions"][0]
    schema = version["schema"]["openAPIV3Schema"]
    assert schema["properties"]["metadata"] == {"type": "object"}
    for path, node in _walk(schema):
        assert not {"$ref", "$defs", "anyOf", "oneOf", "allOf", "default", "const"} & set(node), (
            path
        )
        free = node.get("x-kubernetes-preserve-unknown-fields") or node.get(
            "x-kubernetes-int-or-string"
        )
        assert free or node.get("type") in {
            "object",
            "array",
            "string",
            "integer",
            "number",
            "boolean",
        }, path
        assert not ("properties" in node and "additionalProperties" in node), path
        assert node.get("additionalProperties") is not False, path
    assert version["subresources"] == {"status": {}}


def _schema_at(schema: dict[str, Any], json_path: str) -> dict[str, Any] | None:
    node: dict[str, Any] | None = schema
    for part in json_path.strip(".").split("."):
        if node is None:
            return None
        name = part.removesuffix("[*]")
        props = node.get("properties") or {}
        node = props.get(name) or (node.get("additionalProperties") if not props else None)
        if node is not None and part.endswith("[*]"):
            node = node.get("items")
    return node


@pytest.mark.parametrize("name", list(all_crds()))
def test_printer_columns_point_at_fields(name: str) -> None:
    version = all_crds()[name]["spec"]["versions"][0]
    schema = version["schema"]["openAPIV3Schema"]
    names = [c["name"] for c in version["additionalPrinterColumns"]]
    assert names[-2:] == ["Status", "Age"]
    for column in version["additionalPrinterColumns"]:
        if column["jsonPath"] != ".metadata.creationTimestamp":
            assert _schema_at(schema, column["jsonPath"]) is not None, column


def test_crd_names_follow_the_reference() -> None:
    crds = all_crds()
    assert list(crds) == [
        "virtualservices.gateway.vendor.io",
        "gateways.gateway.vendor.io",
        "httpgateways.gateway.vendor.io",
        "tcpgateways.gateway.vendor.io",
        "routetables.gateway.vendor.io",
        "virtualhostoptions.gateway.vendor.io",
        "routeoptions.gateway.vendor.io",
        "httplisteneroptions.gateway.vendor.io",
        "upstreams.gw.vendor.io",
        "upstreamgroups.gw.vendor.io",
        "authconfigs.enterprise.gw.vendor.io",
        "ratelimitconfigs.ratelimit.vendor.io",
        "settings.gw.vendor.io",
        "proxies.gw.vendor.io",
    ]
    short = {c["spec"]["names"]["kind"]: c["spec"]["names"]["shortNames"] for c in crds.values()}
    assert short == {
        "VirtualService": ["vs"],
        "Gateway": ["gw"],
        "MatchableHttpGateway": ["hgw"],
        "MatchableTcpGateway": ["tgw"],
        "HttpListenerOption": ["hlisopts"],
        "Proxy": ["px"],
        "RouteTable": ["rt"],
        "VirtualHostOption": ["vhopts"],
        "RouteOption": ["rtopts"],
        "Upstream": ["us"],
        "UpstreamGroup": ["ug"],
        "AuthConfig": ["ac"],
        "RateLimitConfig": ["rlc"],
        "Settings": ["st"],
    }
    vs_columns = crds["virtualservices.gateway.vendor.io"]["spec"]["versions"][0]
    assert [c["name"] for c in vs_columns["additionalPrinterColumns"]] == [
        "Domains",
        "SSL",
        "Status",
        "Age",
    ]


def _json_schema(node: Any) -> Any:
    """An OpenAPI v3 node as JSON Schema (`nullable` becomes a null type), to check objects."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if not k.startswith("x-kubernetes")}
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def test_examples_fit_the_crd_schemas() -> None:
    schemas = {
        c["spec"]["names"]["kind"]: _json_schema(
            c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        )
        for c in all_crds().values()
    }
    checked = 0
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") in schemas:
                jsonschema.validate(doc, schemas[doc["kind"]])
                checked += 1
    assert checked >= 2
    wrong = {"apiVersion": "gw.vendor.io/v1", "kind": "Upstream", "metadata": {"name": "x"}}
    wrong["spec"] = {"static": {"hosts": [{"addr": "a", "port": "eighty"}]}}
    with pytest.raises(jsonschema.ValidationError, match="'eighty' is not of type 'integer'"):
        jsonschema.validate(wrong, schemas["Upstream"])


# --- chart and manifests ----------------------------------------------------------------------


def test_plain_manifests_are_the_rendered_chart() -> None:
    found = {p.name: p.read_text() for p in MANIFESTS.glob("*.yaml")}
    assert found == plain_manifests(), "stale: run `python -m tests.support.deploy`"


def test_chart_version_is_gw_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == __version__


@pytest.mark.parametrize("values", list(VARIANTS.values()), ids=list(VARIANTS))
def test_rendered_chart_is_valid(values: dict[str, Any]) -> None:
    docs = documents(render_chart(values))
    custom = {k.API_VERSION: k for k in CRD_KINDS}
    for doc in docs:
        if doc["apiVersion"] in custom:
            resource = api.parse_document(doc)  # gw's own validation
            assert resource.key.namespace == "gw-system"
        else:
            kubernetes_validate.validate(doc, K8S, strict=True)
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for name in ("gw", "gateway-proxy"):
        assert ("Deployment", name) in kinds and ("Service", name) in kinds
    assert ("Settings", "default") in kinds


def _by(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def _container(docs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return dict(_by(docs, "Deployment", name)["spec"]["template"]["spec"]["containers"][0])


def test_components_listen_on_the_reference_ports() -> None:
    docs = documents(render_chart({"redis": {"enabled": True}}))
    ports = {
        name: {p["name"]: p["containerPort"] for p in _container(docs, name).get("ports", [])}
        for name in ("gw", "gateway-proxy", "extauth", "redis")
    }
    assert ports == {
        "gw": {"grpc-xds": 9977, "https-webhook": 8443, "http-monitoring": 9091},
        "gateway-proxy": {"http": 8080, "https": 8443},
        "extauth": {"grpc-extauth": 8083, "http-extauth": 8084},
        "redis": {"redis": 6379},
    }
    gw_service = {
        p["name"]: (p["port"], p["targetPort"]) for p in _by(docs, "Service", "gw")["spec"]["ports"]
    }
    assert gw_service["https-webhook"] == (443, 8443)
    proxy = _container(docs, "gateway-proxy")
    assert "--xds=gw.gw-system.svc:9977" in proxy["args"]
    assert "--admin-port=19000" in proxy["args"]
    env = {e["name"]: e.get("value") for e in _container(docs, "gw")["env"]}
    assert env["START_STATS_SERVER"] == "true"
    webhook = _by(docs, "ValidatingWebhookConfiguration", "gw-validation")["webhooks"][0]
    assert webhook["clientConfig"]["service"] == {
        "name": "gw",
        "namespace": "gw-system",
        "path": "/validation",
        "port": 443,
    }


def _pod_spec(doc: dict[str, Any]) -> dict[str, Any]:
    if doc["kind"] == "CronJob":
        return dict(doc["spec"]["jobTemplate"]["spec"]["template"]["spec"])
    return dict(doc["spec"]["template"]["spec"])


@pytest.mark.parametrize("values", [{}, VARIANTS["everything"], VARIANTS["plaintext-xds"]])
def test_every_deployment_runs_a_gw_command_that_exists(values: dict[str, Any]) -> None:
    """Each container's arguments parse with `gw`'s own command line."""
    command = typer.main.get_command(app)
    docs = documents(render_chart(values))
    checked = []
    for doc in docs:
        if (
            doc["kind"] not in ("Deployment", "Job", "CronJob")
            or doc["metadata"]["name"] == "redis"
        ):
            continue
        args = _pod_spec(doc)["containers"][0]["args"]
        sub = command.get_command(None, args[0])  # type: ignore[attr-defined]
        assert sub is not None, args[0]
        sub.make_context(args[0], list(args[1:]))
        checked.append(f"{doc['kind']}/{doc['metadata']['name']}")
    expected = {"Deployment/gw", "Deployment/discovery", "Deployment/gateway-proxy"}
    expected.add("Deployment/extauth")
    if values.get("ratelimit"):
        expected.add("Deployment/rate-limit")
    if values.get("xds", {}).get("tls", True):
        expected |= {"Job/gw-certgen", "CronJob/gw-certgen"}
    assert set(checked) == expected


def _rules(docs: list[dict[str, Any]], subject: str) -> list[dict[str, Any]]:
    roles = {}
    for doc in docs:
        if doc["kind"] in ("Role", "ClusterRole"):
            roles[(doc["kind"], doc["metadata"]["name"], doc["metadata"].get("namespace"))] = doc
    found = []
    for doc in docs:
        if doc["kind"] in ("RoleBinding", "ClusterRoleBinding") and any(
            s["name"] == subject for s in doc["subjects"]
        ):
            ref = doc["roleRef"]
            namespace = doc["metadata"].get("namespace") if ref["kind"] == "Role" else None
            found += roles[(ref["kind"], ref["name"], namespace)]["rules"]
    return found


def test_rbac_grants_each_component_only_what_it_uses() -> None:
    docs = documents(render_chart({}))
    everything = [r for d in docs if d["kind"] in ("Role", "ClusterRole") for r in d["rules"]]
    for rule in everything:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"], rule
    writes = {"create", "update", "patch", "delete", "deletecollection"}
    gw = _rules(docs, "gw")
    gw_writes = {
        (res, verb, tuple(r.get("resourceNames", [])))
        for r in gw
        for res in r["resources"]
        for verb in r["verbs"]
        if verb in writes
    }
    assert gw_writes == {
        ("virtualservices/status", "patch", ()),
        ("gateways/status", "patch", ()),
        ("httpgateways/status", "patch", ()),
        ("tcpgateways/status", "patch", ()),
        ("routetables/status", "patch", ()),
        ("virtualhostoptions/status", "patch", ()),
        ("routeoptions/status", "patch", ()),
        ("httplisteneroptions/status", "patch", ()),
        ("upstreams/status", "patch", ()),
        ("upstreamgroups/status", "patch", ()),
        ("settings/status", "patch", ()),
        ("authconfigs/status", "patch", ()),
        ("ratelimitconfigs/status", "patch", ()),
        ("leases", "create", ()),
        ("leases", "update", ("gw-controlplane",)),
        ("secrets", "create", ()),
        ("validatingwebhookconfigurations", "update", ("gw-validation",)),
    }
    discovery_writes = {
        (res, verb)
        for r in _rules(docs, "discovery")
        for res in r["resources"]
        for verb in r["verbs"]
        if verb in writes
    }
    assert discovery_writes == {
        ("upstreams", "create"),
        ("upstreams", "update"),
        ("upstreams", "delete"),
    }
    certgen_writes = {
        (res, verb, tuple(r.get("resourceNames", [])))
        for r in _rules(docs, "gw-certgen")
        for res in r["resources"]
        for verb in r["verbs"]
        if verb in writes
    }
    assert certgen_writes == {
        ("secrets", "create", ()),
        (
            "secrets",
            "update",
            tuple(secret_name(p) for p in ["ca", *parties("gw-system", ["gateway-proxy"])]),
        ),
    }
    assert _rules(docs, "gateway-proxy") == [] and _rules(docs, "extauth") == []
    for name in ("gateway-proxy", "extauth"):
        spec = _by(docs, "Deployment", name)["spec"]["template"]["spec"]
        assert spec["automountServiceAccountToken"] is False


def test_watch_namespaces_trade_the_cluster_role_for_roles() -> None:
    docs = documents(render_chart({"watchNamespaces": ["team-a"]}))
    reader_roles = {
        d["metadata"]["namespace"]
        for d in docs
        if d["kind"] == "Role" and d["metadata"]["name"] == "gw-controlplane-gw-system"
    }
    assert reader_roles == {"team-a", "gw-system"}
    assert not any(
        d["kind"] == "ClusterRole" and "controlplane" in d["metadata"]["name"] for d in docs
    )
    assert "--watch-namespace=team-a" in _container(docs, "gw")["args"]


def test_the_default_settings_parse() -> None:
    settings = _by(documents(render_chart({})), "Settings", "default")
    parsed = api.parse_document(copy.deepcopy(settings))
    assert isinstance(parsed, api.Settings)
    assert parsed.spec.extauth is not None
    assert parsed.spec.extauth.request_timeout == "200ms"
    assert crd_name(api.Settings) == "settings.gw.vendor.io"


def test_the_rate_limit_server_counts_in_the_charts_redis_and_settings_name_it() -> None:
    docs = documents(render_chart({"ratelimit": {"enabled": True}, "redis": {"enabled": True}}))
    container = _container(docs, "rate-limit")
    assert container["args"][:2] == ["ratelimit", "--xds=gw.gw-system.svc:9977"]
    assert "--role=gw-system~ratelimit" in container["args"]
    assert container["ports"] == [{"name": "grpc-ratelimit", "containerPort": 18081}]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["REDIS_URL"] == "redis.gw-system.svc:6379"
    assert _rules(docs, "rate-limit") == []
    spec = _by(docs, "Deployment", "rate-limit")["spec"]["template"]["spec"]
    assert spec["automountServiceAccountToken"] is False
    settings = api.parse_document(copy.deepcopy(_by(docs, "Settings", "default")))
    assert isinstance(settings, api.Settings)
    server = settings.spec.ratelimit_server
    assert server is not None and server.ratelimit_server_ref is not None
    assert server.ratelimit_server_ref.name == "rate-limit"
    assert server.deny_on_fail is False
    # Off by default: it needs a Redis.
    assert not any(d["metadata"]["name"] == "rate-limit" for d in documents(render_chart({})))


SERVER_USERS = """
apiVersion: ratelimit.vendor.io/v1alpha1
kind: RateLimitConfig
metadata: {name: per-client, namespace: default}
spec:
  raw:
    descriptors: [{key: client, rateLimit: {unit: MINUTE, requestsPerUnit: 3}}]
    rateLimits: [{actions: [{requestHeaders: {headerName: x-client, descriptorKey: client}}]}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: app, namespace: default}
spec:
  virtualHost:
    domains: [app.example.com]
    options:
      extauth: {customAuth: {}}
      rateLimitConfigs: {refs: [{name: per-client}]}
    routes: [{matchers: [{prefix: /}], directResponseAction: {status: 200}}]
"""


def test_the_settings_name_the_installs_upstreams_extauth_and_rate_limit() -> None:
    """As the established install does: Upstreams `extauth` and `rate-limit` in the install
    namespace, on the servers' Services (gRPC, so HTTP/2), and Settings naming them. The
    chart's own resources, translated by gw, send checks and limits to those servers."""
    docs = documents(render_chart({"ratelimit": {"enabled": True}, "redis": {"enabled": True}}))
    for name, port in (("extauth", 8083), ("rate-limit", 18081)):
        upstream = api.parse_document(copy.deepcopy(_by(docs, "Upstream", name)))
        assert isinstance(upstream, api.Upstream) and upstream.spec.orch is not None
        assert (upstream.spec.orch.service_name, upstream.spec.orch.service_port) == (name, port)
        assert upstream.spec.orch.service_namespace == "gw-system" and upstream.spec.use_http2
        service_ports = _by(docs, "Service", name)["spec"]["ports"]
        assert [p["port"] for p in service_ports][0] == port  # extauth: then its HTTP checks
    ours = ("Upstream", "Settings", "Service")
    resources = [api.parse_document(copy.deepcopy(d)) for d in docs if d["kind"] in ours]
    resources += [api.parse_document(d) for d in yaml.safe_load_all(SERVER_USERS)]
    result = translate(Snapshot(resources={r.key: r for r in resources}), Options())
    for name in ("extauth", "rate-limit"):
        key = api.ResourceKey("Upstream", "gw-system", name)
        assert result.statuses[key].state == "Accepted", result.statuses[key]
    assert result.statuses[api.ResourceKey("VirtualService", "default", "app")].state == (
        "Accepted"
    )
    clusters = {c.name: c for c in result.proxy.clusters}
    for name, port in (("extauth", 8083), ("rate-limit", 18081)):
        cluster = clusters[f"{name}_gw-system"]
        assert cluster.http2 and cluster.service is not None
        assert (cluster.service.name, cluster.service.port) == (name, port)
    listeners = json.dumps(xds_to_data(result.xds)["listeners"])
    assert '"cluster_name": "extauth_gw-system"' in listeners  # ext_authz
    assert '"cluster_name": "rate-limit_gw-system"' in listeners  # ratelimit


def test_the_image_runs_gw_as_the_chart_expects() -> None:
    """The Dockerfile cannot be built here (no container engine): its contract with the chart
    is checked instead: entry point `gw`, the non-root user the pods run as."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["gw"]' in dockerfile
    assert "useradd --uid 10101" in dockerfile and "USER 10101" in dockerfile
    docs = documents(render_chart({}))
    for name in ("gw", "discovery", "gateway-proxy", "extauth"):
        assert _container(docs, name)["securityContext"]["runAsUser"] == 10101
        assert _container(docs, name)["image"] == f"gw:{__version__}"


# --- xDS: mutual TLS and network policies -------------------------------------------------------

XDS_CLIENTS = {"gw": "controlplane", "gateway-proxy": "gateway-proxy", "extauth": "extauth"}
XDS_CLIENTS["rate-limit"] = "ratelimit"


def test_every_xds_party_mounts_its_own_certificates_from_certgen() -> None:
    """Each deployment mounts the Secret `gw certgen --orch` writes for its party (the names
    come from gw's own code), and passes the folder with --xds-certs."""
    docs = documents(render_chart(VARIANTS["everything"]))
    issued = {secret_name(p) for p in parties("gw-system", ["gateway-proxy"])}
    mounted = set()
    for deployment, party in XDS_CLIENTS.items():
        container = _container(docs, deployment)
        assert "--xds-certs=/etc/gw/xds" in container["args"], deployment
        assert {"name": "xds-certs", "mountPath": "/etc/gw/xds", "readOnly": True} in container[
            "volumeMounts"
        ]
        volumes = _by(docs, "Deployment", deployment)["spec"]["template"]["spec"]["volumes"]
        (secret,) = [v["secret"]["secretName"] for v in volumes if v["name"] == "xds-certs"]
        assert secret == secret_name(party)
        mounted.add(secret)
    assert mounted == issued
    job = _pod_spec(_by(docs, "Job", "gw-certgen"))
    assert job["serviceAccountName"] == "gw-certgen"
    assert job["containers"][0]["args"][:3] == ["certgen", "--orch", "--proxy=gateway-proxy"]
    hooks = _by(docs, "Job", "gw-certgen")["metadata"]["annotations"]
    assert hooks["helm.sh/hook"] == "pre-install,pre-upgrade"
    assert _by(docs, "CronJob", "gw-certgen")["spec"]["schedule"] == "0 3 1 * *"


def test_plaintext_xds_is_an_explicit_choice() -> None:
    docs = documents(render_chart(VARIANTS["plaintext-xds"]))
    for deployment in ("gw", "gateway-proxy", "extauth"):
        container = _container(docs, deployment)
        assert "--insecure-xds" in container["args"]
        assert not any(a.startswith("--xds-certs") for a in container["args"])
    assert not any(d["metadata"]["name"] == "gw-certgen" for d in docs)
    assert not any(d["kind"] == "NetworkPolicy" for d in docs)


def _allowed(policy: dict[str, Any], port: int) -> list[dict[str, Any]] | None:
    """The peers a policy lets reach `port` (an empty list: anyone); None: the port is shut."""
    for rule in policy["spec"].get("ingress", []):
        if any(p["port"] == port for p in rule["ports"]):
            return list(rule.get("from", []))
    return None


def test_network_policies_keep_xds_to_its_clients_and_the_debug_server_to_the_namespace() -> None:
    docs = documents(render_chart(VARIANTS["everything"]))
    policies = {d["metadata"]["name"]: d for d in docs if d["kind"] == "NetworkPolicy"}
    control_plane = policies["gw"]
    assert control_plane["spec"]["podSelector"] == {"matchLabels": {"gw": "gw"}}
    assert control_plane["spec"]["policyTypes"] == ["Ingress"]
    assert _allowed(control_plane, 9977) == [
        {
            "podSelector": {
                "matchExpressions": [
                    {
                        "key": "gw",
                        "operator": "In",
                        "values": ["gateway-proxy", "extauth", "rate-limit"],
                    }
                ]
            }
        }
    ]
    assert _allowed(control_plane, 9091) == [{"podSelector": {}}]  # this namespace only
    assert _allowed(control_plane, 8443) == []  # the API server calls the webhook
    assert _allowed(control_plane, 9999) is None
    # Every party named as an xDS client runs a deployment of that label.
    labels = {
        d["spec"]["template"]["metadata"]["labels"]["gw"] for d in docs if d["kind"] == "Deployment"
    }
    assert {"gateway-proxy", "extauth", "rate-limit"} <= labels
    data_plane = policies["gw-data-plane"]
    proxies_only = [{"podSelector": {"matchLabels": {"gw": "gateway-proxy"}}}]
    for port in (8083, 8084, 18081):  # extauth's gRPC and HTTP checks, rate limit
        assert _allowed(data_plane, port) == proxies_only, port
    redis = policies["gw-redis"]
    assert _allowed(redis, 6379) == [
        {
            "podSelector": {
                "matchExpressions": [
                    {"key": "gw", "operator": "In", "values": ["extauth", "rate-limit"]}
                ]
            }
        }
    ]
    assert "ingress" not in policies["gw-serves-nothing"]["spec"]
    extra = {"ipBlock": {"cidr": "10.0.0.10/32"}}
    more = documents(render_chart({"networkPolicy": {"debugServerFrom": [extra]}}))
    widened = next(
        d for d in more if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "gw"
    )
    assert _allowed(widened, 9091) == [{"podSelector": {}}, extra]
