"""gw on the orchestrator, end to end: `gw controlplane --orch` reads the cluster and writes
statuses back, its validation webhook refuses what would be Rejected, and three real Envoys
(`gw proxy`, the replicas of `gateway-proxy`) pull the same configuration.

The orchestrator's API server is the in-test one (`tests/support/kube_api.py`): it stands in
for the real API server, which cannot run on these machines. Everything else is real.

Each proxy runs in its own network namespace, as a pod does: every replica receives the
same listener (the same port) and binds it without clashing, which is what replicas do in a
cluster. gw keeps `enable_reuse_port: false` (a clash on one host must fail loudly), so
sharing a port on one host is not the answer. The namespaces reach the control plane over a
Unix socket (`--xds-socket`; a socket file crosses network namespaces) and the test reaches
each Envoy's admin interface over another; requests to a proxy are made inside its namespace.

xDS is mutual TLS, as the chart installs it: `gw certgen --orch` writes the Secrets
`gw-xds-*` into the cluster, and the test mounts them as the orchestrator would (a folder
per Secret, its files swapped at once on an update), for the control plane and the proxies.
"""

from __future__ import annotations

import base64
import re
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.kube_api import FakeKubeApi
from tests.support.ports import free_port
from tests.support.processes import Process, gw_command, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

NS = "gw-system"
VS_API = "gateway.vendor.io/v1"
ROLE = f"{NS}~gateway-proxy"


def web(body: str) -> dict[str, Any]:
    return {
        "apiVersion": VS_API,
        "kind": "VirtualService",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "virtualHost": {
                "domains": ["web.example.com"],
                "routes": [
                    {
                        "matchers": [{"prefix": "/"}],
                        "directResponseAction": {"status": 200, "body": body},
                    }
                ],
            }
        },
    }


WEBHOOK_CONFIGURATION = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingWebhookConfiguration",
    "metadata": {"name": "gw-validation"},
    "webhooks": [
        {
            "name": "gw.gw-system.svc",
            "clientConfig": {"service": {"name": "gw", "namespace": NS, "path": "/validation"}},
            "rules": [],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }
    ],
}


def certgen(api: FakeKubeApi, workdir: Path) -> None:
    """`gw certgen --orch`, as the `gw-certgen` Job runs it."""
    subprocess.run(
        gw_command(
            "certgen", "--orch", "--kubeconfig", str(api.kubeconfig(workdir / "kubeconfig"))
        ),
        env=gw_env(workdir),
        check=True,
        capture_output=True,
        timeout=60,
    )


def mount(api: FakeKubeApi, secret: str, folder: Path) -> Path:
    """The Secret's files in `folder`, swapped in at once as the orchestrator updates a
    mounted Secret."""
    from gw.certgen import DATA_LINK

    found = api.get("v1", "Secret", NS, secret)
    assert found is not None, f"no Secret {secret}"
    folder.mkdir(parents=True, exist_ok=True)
    fresh = folder / f"..{found['metadata']['resourceVersion']}"
    fresh.mkdir()
    for key, value in found["data"].items():
        (fresh / key).write_bytes(base64.b64decode(value))
    temp = folder / f"{DATA_LINK}_tmp"
    temp.symlink_to(fresh.name)
    temp.replace(folder / DATA_LINK)
    for key in found["data"]:
        if not (folder / key).is_symlink():
            (folder / key).symlink_to(f"{DATA_LINK}/{key}")
    return folder


class ControlPlaneProcess:
    def __init__(self, api: FakeKubeApi, workdir: Path) -> None:
        self.xds_port, self.debug_port, self.webhook_port = free_port(), free_port(), free_port()
        self.http_port = free_port()
        self.socket = workdir / "xds.sock"
        certgen(api, workdir)
        self.certs = mount(api, "gw-xds-controlplane", workdir / "xds-certs" / "controlplane")
        env = gw_env(workdir)
        env["START_STATS_SERVER"] = "true"
        self.process = Process(
            gw_command(
                "controlplane",
                "--orch",
                "--kubeconfig",
                str(api.kubeconfig(workdir / "kubeconfig")),
                "--bind",
                "127.0.0.1",
                "--xds-port",
                str(self.xds_port),
                "--xds-socket",
                str(self.socket),
                "--xds-certs",
                str(self.certs),
                "--debug-port",
                str(self.debug_port),
                "--webhook-port",
                str(self.webhook_port),
                "--http-port",
                str(self.http_port),
                "--proxy-bind",
                "127.0.0.1",
                "--lease-duration",
                "3",
            ),
            env,
            workdir / "controlplane.log",
        )
        wait_until(self._ready, timeout=30, what="the control plane")

    def _ready(self) -> bool:
        if not self.process.alive():
            raise RuntimeError(f"the control plane exited:\n{self.process.output()}")
        return self.admin("/proxies")["translation"]["count"] > 0

    def admin(self, path: str) -> Any:
        response = httpx.get(f"http://127.0.0.1:{self.debug_port}{path}", timeout=5)
        response.raise_for_status()
        return response.json()["data"]

    def connections(self) -> list[dict[str, Any]]:
        return [c for c in self.admin("/proxies")["connections"] if c["role"] == ROLE]


class NamespacedProxy:
    """`gw proxy` in a network namespace of its own (a pod of `gateway-proxy`)."""

    def __init__(
        self, plane: ControlPlaneProcess, workdir: Path, name: str, api: FakeKubeApi
    ) -> None:
        self.name = name
        certs = mount(api, "gw-xds-gateway-proxy", workdir / "xds-certs" / name)
        self.admin_socket = workdir / f"{name}-admin.sock"
        self.admin_socket.unlink(missing_ok=True)
        proxy = gw_command(
            "proxy",
            "--xds",
            f"unix:{plane.socket}",
            "--admin-host",
            f"unix:{self.admin_socket}",
            "--node-id",
            name,
            "--concurrency",
            "1",
            "--xds-certs",
            str(certs),
        )
        self.process = Process(
            ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *proxy],
            gw_env(workdir),
            workdir / f"{name}.log",
        )
        self.http_port = plane.http_port

    def admin(self, path: str) -> httpx.Response:
        transport = httpx.HTTPTransport(uds=str(self.admin_socket))
        with httpx.Client(transport=transport, timeout=5) as client:
            return client.get(f"http://envoy{path}")

    def request(self, host: str) -> str:
        """GET / inside the proxy's network namespace; the response body."""
        result = subprocess.run(
            [
                "nsenter",
                f"--net=/proc/{self.process.popen.pid}/ns/net",
                "curl",
                "-s",
                "-m",
                "5",
                "-H",
                f"host: {host}",
                f"http://127.0.0.1:{self.http_port}/",
            ],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return result.stdout

    def stop(self) -> None:
        self.process.stop()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("orch")


@pytest.fixture(scope="module")
def api() -> Iterator[FakeKubeApi]:
    with FakeKubeApi() as server:
        server.apply(WEBHOOK_CONFIGURATION)
        server.apply(web("v1"))
        yield server


@pytest.fixture(scope="module")
def plane(api: FakeKubeApi, workdir: Path) -> Iterator[ControlPlaneProcess]:
    process = ControlPlaneProcess(api, workdir)
    yield process
    process.process.stop()


@pytest.fixture(scope="module")
def proxies(
    api: FakeKubeApi, plane: ControlPlaneProcess, workdir: Path
) -> Iterator[list[NamespacedProxy]]:
    started = [NamespacedProxy(plane, workdir, f"gateway-proxy-{i}", api) for i in range(3)]
    yield started
    for proxy in started:
        proxy.stop()


def vs_state(api: FakeKubeApi) -> str | None:
    found = api.get(VS_API, "VirtualService", "default", "web") or {}
    entry = found.get("status", {}).get("statuses", {}).get(NS)
    return entry["state"] if entry else None


def acked(connection: dict[str, Any]) -> dict[str, str]:
    return {t: s["acked"] for t, s in connection["types"].items()}


def all_serve(proxies: list[NamespacedProxy], body: str) -> bool:
    return all(p.request("web.example.com") == body for p in proxies)


def same_versions(plane: ControlPlaneProcess, count: int) -> bool:
    """`count` proxies connected, each having acked the same version of every type."""
    connections = plane.connections()
    versions = [acked(c) for c in connections]
    return len(connections) == count and all(v == versions[0] and all(v.values()) for v in versions)


def test_statuses_are_written_to_the_cluster(api: FakeKubeApi, plane: ControlPlaneProcess) -> None:
    wait_until(lambda: vs_state(api) == "Accepted", what="the status on the VirtualService")
    lease = api.get("coordination.k8s.io/v1", "Lease", NS, "gw-controlplane")
    assert lease is not None and lease["spec"]["holderIdentity"]


def test_three_proxies_pull_the_same_config(
    plane: ControlPlaneProcess, proxies: list[NamespacedProxy]
) -> None:
    wait_until(lambda: all_serve(proxies, "v1"), timeout=30, what="every proxy to serve v1")
    wait_until(lambda: same_versions(plane, 3), what="three proxies on the same versions")
    for proxy in proxies:
        dump = proxy.admin("/config_dump").json()
        listeners = [c for c in dump["configs"] if c["@type"].endswith("ListenersConfigDump")][0][
            "dynamic_listeners"
        ]
        ports = {
            li["active_state"]["listener"]["address"]["socket_address"]["port_value"]
            for li in listeners
        }
        assert ports == {plane.http_port}  # every replica binds the same port, in its own netns


def test_a_change_reaches_every_proxy(
    api: FakeKubeApi, plane: ControlPlaneProcess, proxies: list[NamespacedProxy]
) -> None:
    wait_until(lambda: same_versions(plane, 3), what="three proxies on the same versions")
    before = acked(plane.connections()[0])
    api.apply(web("v2"))
    wait_until(lambda: all_serve(proxies, "v2"), what="every proxy to serve v2")
    wait_until(lambda: same_versions(plane, 3), what="the new version acked by all three")
    after = acked(plane.connections()[0])
    assert after != before


def test_a_restarted_proxy_gets_the_current_config(
    api: FakeKubeApi,
    plane: ControlPlaneProcess,
    proxies: list[NamespacedProxy],
    workdir: Path,
) -> None:
    api.apply(web("v3"))
    wait_until(lambda: all_serve(proxies, "v3"), what="every proxy to serve v3")
    proxies[1].stop()
    wait_until(lambda: len(plane.connections()) == 2, what="the stopped proxy to disconnect")
    api.apply(web("v4"))  # changed while the replica is away
    wait_until(lambda: all_serve([proxies[0], proxies[2]], "v4"), what="the others on v4")
    proxies[1] = NamespacedProxy(plane, workdir, "gateway-proxy-1b", api)
    wait_until(lambda: proxies[1].request("web.example.com") == "v4", timeout=30)
    wait_until(lambda: same_versions(plane, 3), what="the new replica on the same versions")


def test_certgen_rotates_the_certificates_under_the_running_proxies(
    api: FakeKubeApi, plane: ControlPlaneProcess, proxies: list[NamespacedProxy], workdir: Path
) -> None:
    """`gw certgen --orch` again (the CronJob, or an upgrade): every certificate is re-issued
    under the kept CA; the updated Secrets reach the pods' folders; the proxies stay
    connected and keep getting changes, and a proxy starting now connects with the new ones."""
    wait_until(lambda: same_versions(plane, 3), what="three proxies on the same versions")

    def data(secret: str) -> dict[str, str]:
        return dict((api.get("v1", "Secret", NS, secret) or {})["data"])

    ca, proxy_cert = data("gw-xds-ca")["ca.crt"], data("gw-xds-gateway-proxy")["tls.crt"]
    connections = {c["id"] for c in plane.connections()}
    certgen(api, workdir)
    assert data("gw-xds-ca")["ca.crt"] == ca
    assert data("gw-xds-gateway-proxy")["tls.crt"] != proxy_cert
    mount(api, "gw-xds-controlplane", plane.certs)
    for proxy in proxies:
        mount(api, "gw-xds-gateway-proxy", workdir / "xds-certs" / proxy.name)
    api.apply(web("v5"))
    wait_until(lambda: all_serve(proxies, "v5"), what="every proxy to serve v5")
    assert {c["id"] for c in plane.connections()} == connections  # nobody reconnected
    late = NamespacedProxy(plane, workdir, "gateway-proxy-late", api)
    try:
        wait_until(lambda: late.request("web.example.com") == "v5", timeout=30)
    finally:
        late.stop()
    assert "xds: certificates in" in plane.process.output()


def review(obj: dict[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "1234",
            "kind": {"group": "gateway.vendor.io", "version": "v1", "kind": obj["kind"]},
            "operation": operation,
            "object": obj,
        },
    }


def test_the_webhook_refuses_what_would_be_rejected(
    api: FakeKubeApi, plane: ControlPlaneProcess, workdir: Path
) -> None:
    secret = api.get("v1", "Secret", NS, "gw-validation-certs")
    assert secret is not None, "the control plane keeps its webhook certificate in a Secret"
    ca = base64.b64decode(secret["data"]["ca.crt"])
    configuration = api.get(
        "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, "gw-validation"
    )
    assert configuration is not None
    assert configuration["webhooks"][0]["clientConfig"]["caBundle"] == secret["data"]["ca.crt"]

    context = ssl.create_default_context(cadata=ca.decode())
    url = f"https://127.0.0.1:{plane.webhook_port}/validation"

    def post(obj: dict[str, Any]) -> dict[str, Any]:
        # verified as the orchestrator does: against the caBundle, for the service's name
        with httpx.Client(verify=context, timeout=10) as client:
            answer = client.post(
                url, json=review(obj), extensions={"sni_hostname": "gw.gw-system.svc"}
            )
        answer.raise_for_status()
        return dict(answer.json()["response"])

    fine = web("v9") | {"metadata": {"name": "other", "namespace": "default"}}
    fine["spec"] = {"virtualHost": {"domains": ["other.example.com"], "routes": []}}
    assert post(fine) == {  # a Warning is admitted (allowWarnings), and says why
        "uid": "1234",
        "allowed": True,
        "warnings": ["spec.virtualHost.routes: the virtual host has no routes; it serves nothing"],
    }

    clash = web("x") | {"metadata": {"name": "clash", "namespace": "default"}}
    refused = post(clash)
    assert refused["allowed"] is False
    message = refused["status"]["message"]
    assert message.startswith(
        "resource incompatible with current gw snapshot: [Validating *v1.VirtualService "
        "failed: 2 errors occurred:\n\t* Validating *v1.VirtualService failed: validating "
        '*v1.VirtualService name:"clash"  namespace:"default": '
    )
    assert "domain conflict: the [web.example.com] domain" in message
    assert 'name:"web"  namespace:"default"' in message  # the live one would be rejected too
    assert message.endswith("\n\n]")

    broken = web("x")
    broken["spec"]["virtualHost"]["routes"][0]["options"] = {"timeout": "soon"}
    refused = post(broken)
    assert refused["allowed"] is False
    assert refused["status"]["message"].startswith(
        "could not unmarshal raw object: parsing resource from crd spec web in namespace "
        "default into *v1.VirtualService: spec.virtualHost.routes[0].options.timeout: "
    )
    assert vs_state(api) == "Accepted"  # nothing was stored; the live one is untouched


def _cluster_objects(api: FakeKubeApi, plane: ControlPlaneProcess) -> None:
    """What an install puts in the cluster besides gw's resources: the Deployments and their
    pods, the gateway-proxy Service with its load balancer, and the gw service's port 9091
    (reached through the API server's service proxy, as on a real cluster)."""
    api.backends[(NS, "gw", "9091")] = f"http://127.0.0.1:{plane.debug_port}"
    for name in ("gw", "discovery", "gateway-proxy"):
        api.apply(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": name, "namespace": NS, "labels": {"gw": name}},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"gw": name}},
                    "template": {
                        "metadata": {"labels": {"gw": name}},
                        "spec": {"containers": [{"name": name, "image": "gw:0.1.0"}]},
                    },
                },
                "status": {"replicas": 1, "availableReplicas": 1},
            }
        )
        api.apply(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{name}-0", "namespace": NS, "labels": {"gw": name}},
                "spec": {"containers": [{"name": name, "image": "gw:0.1.0"}]},
                "status": {
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            "name": name,
                            "image": "gw:0.1.0",
                            "imageID": "gw@sha256:0",
                            "ready": True,
                            "restartCount": 0,
                        }
                    ],
                },
            }
        )
        api.pod_logs[(NS, f"{name}-0")] = f"{name} started\n"
    api.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "gateway-proxy", "namespace": NS},
            "spec": {
                "type": "LoadBalancer",
                "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}},
        }
    )


def test_gwctl_works_against_the_cluster(
    api: FakeKubeApi, plane: ControlPlaneProcess, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gwctl with no `gw up` on the machine and a kubeconfig: it works on the cluster (the
    admin API through the API server's service proxy, objects, pod logs)."""
    from tests.support.gwctl import gwctl, parse_table

    _cluster_objects(api, plane)
    home = workdir / "gwctl-home"  # no `gw up` here: gwctl goes to the cluster
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("KUBECONFIG", str(workdir / "kubeconfig"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return gwctl(home, *args)

    url = run("proxy", "url")
    assert (url.returncode, url.stdout) == (0, "http://192.0.2.10:80\n"), url.stderr
    address = run("proxy", "address", "--port", "https")
    assert address.stdout == "192.0.2.10:443\n", address.stderr

    wait_until(lambda: vs_state(api) == "Accepted")
    listed = run("get", "virtualservice")
    assert listed.returncode == 0, listed.stderr
    rows = {r["VIRTUAL SERVICE"]: r for r in parse_table(listed.stdout)}
    assert rows["web"]["STATUS"] == "Accepted"
    assert rows["web"]["DOMAINS"] == "web.example.com"

    created = run(
        "create",
        "upstream",
        "orch",
        "--orch-service",
        "petstore",
        "--orch-service-namespace",
        "default",
        "--orch-service-port",
        "8080",
        "-n",
        NS,
        "petstore",
    )
    assert created.returncode == 0, created.stderr
    stored = api.get("gw.vendor.io/v1", "Upstream", NS, "petstore")
    assert stored is not None and stored["spec"]["orch"]["serviceName"] == "petstore"

    def upstream_state() -> str | None:
        found = api.get("gw.vendor.io/v1", "Upstream", NS, "petstore") or {}
        entry = found.get("status", {}).get("statuses", {}).get(NS)
        return entry["state"] if entry else None

    wait_until(lambda: upstream_state() is not None, what="the new upstream's status")

    checked = run("check")
    assert "Checking Deployments... OK" in checked.stdout, checked.stdout + checked.stderr
    assert "Checking Pods... OK" in checked.stdout
    assert "Checking VirtualServices... OK" in checked.stdout
    logs = run("debug", "logs")
    assert logs.returncode == 0, logs.stderr
    assert "gateway-proxy started" in logs.stdout and "gw started" in logs.stdout


def test_gwctl_apply_and_delete_on_the_cluster(
    api: FakeKubeApi,
    plane: ControlPlaneProcess,
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`gwctl apply -f` is a server-side apply and `gwctl delete` a delete on the cluster;
    both print the status the control plane then reports (read through its admin API)."""
    from tests.support.gwctl import gwctl

    _cluster_objects(api, plane)
    home = workdir / "gwctl-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("KUBECONFIG", str(workdir / "kubeconfig"))
    manifest = tmp_path / "applied.yaml"

    def write(body: str, matcher: dict[str, str] | None = None) -> None:
        route: dict[str, Any] = {
            "matchers": [matcher or {"prefix": "/"}],
            "directResponseAction": {"status": 200, "body": body},
        }
        doc = web(body)
        doc["metadata"]["name"] = "applied"
        doc["spec"]["virtualHost"] = {"domains": ["applied.example.com"], "routes": [route]}
        manifest.write_text(yaml.safe_dump(doc))

    write("one")
    created = gwctl(home, "apply", "-f", str(manifest))
    assert (created.returncode, created.stdout) == (
        0,
        "VirtualService default.applied created: Accepted\n",
    ), created.stderr
    stored = api.get(VS_API, "VirtualService", "default", "applied")
    assert stored is not None
    assert stored["spec"]["virtualHost"]["routes"][0]["directResponseAction"]["body"] == "one"

    # `gwctl add route` changes the stored object (not the control plane's view of it) and
    # applies it back: the status, versions and managed fields the server keeps stay its own.
    added = gwctl(
        home, "add", "route", "--name", "applied", "-n", "default", "-p", "/more", "-u", "absent"
    )
    assert added.returncode == 0, added.stderr
    assert "/more -> gw-system.absent (upstream)" in added.stdout
    assert "gw-system.absent } not found" in added.stdout, added.stdout
    stored = api.get(VS_API, "VirtualService", "default", "applied")
    assert stored is not None
    routes = stored["spec"]["virtualHost"]["routes"]
    assert [r["matchers"] for r in routes] == [[{"prefix": "/more"}], [{"prefix": "/"}]]
    assert routes[1]["directResponseAction"] == {"status": 200, "body": "one"}

    write("two", matcher={"regex": "(unclosed"})
    changed = gwctl(home, "apply", "-f", str(manifest))
    assert changed.returncode == 1  # Rejected: the exit status says so
    assert changed.stdout.splitlines()[0] == "VirtualService default.applied configured: Rejected"
    assert "spec.virtualHost.routes[0].matchers[0].regex" in changed.stdout

    deleted = gwctl(home, "delete", "vs", "applied")
    assert (deleted.returncode, deleted.stdout) == (
        0,
        "VirtualService default.applied deleted\n",
    ), deleted.stderr
    assert api.get(VS_API, "VirtualService", "default", "applied") is None
    gone = gwctl(home, "delete", "vs", "applied")
    assert (gone.returncode, gone.stderr) == (1, "Error: VirtualService 'applied' not found\n")


def test_the_console_through_the_api_servers_service_proxy(
    api: FakeKubeApi,
    plane: ControlPlaneProcess,
    proxies: list[NamespacedProxy],
    workdir: Path,
) -> None:
    """The console of `gw controlplane --orch`, opened in Chromium as an operator reaches it
    on a cluster: through the API server's service proxy (a path prefix in front of it). Its
    relative links, style sheet and explain form work there; it lists the cluster's
    resources and the three connected proxies; it says that traffic numbers are not
    available (the control plane does not reach the proxies' admin)."""
    from playwright.sync_api import expect

    from tests.support.browser import chromium

    _cluster_objects(api, plane)
    wait_until(lambda: vs_state(api) == "Accepted")
    wait_until(lambda: len(plane.connections()) == 3, what="the three proxies")
    base = f"{api.url}/api/v1/namespaces/{NS}/services/gw:9091/proxy/console/"
    with chromium(workdir / "console-profile") as browser:
        page = browser.new_page()
        page.goto(base)
        row = page.locator("table.resources tbody tr", has_text="default.web")
        expect(row.locator(".badge")).to_have_text("Accepted")
        display = page.evaluate("getComputedStyle(document.querySelector('.bar')).display")
        assert display == "flex"  # the style sheet came through the prefix

        page.click("nav >> text=Routes")
        assert page.url == base + "routes"
        host = page.locator("section.host", has_text="VirtualService default.web")
        expect(host).to_contain_text("web.example.com")
        host.locator("a.explain-link").first.click()
        page.click("#explain")
        expect(page.locator("#outcome .summary")).to_have_text(re.compile(r"^200 v\w*$"))
        expect(page.locator("#send")).to_have_count(0)  # read-only

        page.click("nav >> text=Traffic")
        expect(page.locator("#unavailable")).to_contain_text("does not reach its proxies")

        page.click("nav >> text=Proxies")
        clients = page.locator("#clients tbody")
        for proxy in proxies:
            expect(clients).to_contain_text(proxy.name)
        expect(clients.locator("tr", has_text="Listener").locator(".badge")).to_have_text(
            ["ACK", "ACK", "ACK"]
        )
