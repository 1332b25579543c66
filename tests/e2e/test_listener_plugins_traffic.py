"""A Gateway's listener-wide traffic policies end to end: one `gw up` whose Gateways each set
one of `csrf`, `buffer`, `dynamicForwardProxy`, `sanitizeClusterHeader` and `extProc` in
`httpGateway.options`, and a `plain` gateway without them serving the same virtual hosts
(so each test shows the policy is the listener's doing). Real Envoy, `gw echo` upstreams.

The external processor is a test peer outside the product (`tests/support/ext_processor.py`:
it adds `x-ext-proc-<name>` to each request it sees); the Settings declare none, so the
`processed` gateway's processor is its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support.certs import make_ca, make_cert
from tests.support.ext_processor import ExtProcessor
from tests.support.manifests import gateway, upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

#: Each gateway and its `httpGateway.options` (YAML flow mappings).
GATEWAYS = {
    "plain": "{}",
    "csrf": "{csrf: {filterEnabled: {defaultValue: {numerator: 100}}}}",
    "buffered": "{buffer: {maxRequestBytes: 16}}",
    "forward": "{dynamicForwardProxy: {dnsCacheConfig: {dnsLookupFamily: V4_ONLY, maxHosts: 1}}}",
    "tls-forward": (
        "{dynamicForwardProxy: {sslConfig: {secretRef: {name: dfp-ca, namespace: gw-system}}}}"
    ),
    "sanitized": "{sanitizeClusterHeader: true}",
    "processed": (
        "{extProc: {grpcService: {extProcServerRef: {name: proc, namespace: gw-system}}, "
        "processingMode: {requestHeaderMode: SEND, responseHeaderMode: SKIP}}}"
    ),
}

HOSTS = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: targets, namespace: default}
spec:
  virtualHost:
    domains: [forward.test]
    routes:
    - matchers: [{prefix: /}]
      routeAction: {dynamicForwardProxy: {autoHostRewriteHeader: x-target}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: picked, namespace: default}
spec:
  virtualHost:
    domains: [picked.test]
    routes:
    - matchers: [{prefix: /}]
      routeAction: {clusterHeader: x-cluster}
"""


@dataclass
class Setup:
    gw: GwUp
    ports: dict[str, int]
    echoes: dict[str, Echo]

    def send(
        self, gateway: str, method: str, host: str, path: str = "/", **kwargs: object
    ) -> httpx.Response:
        headers = {"host": host, **kwargs.pop("headers", {})}  # type: ignore[dict-item]
        url = f"http://127.0.0.1:{self.ports[gateway]}{path}"
        return httpx.request(method, url, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("listener-traffic")
    ca = make_ca()
    server = make_cert(["secure.test"], ca)  # and 127.0.0.1
    (root / "tls.crt").write_text(server.cert_pem)
    (root / "tls.key").write_text(server.key_pem)
    tls = ("--tls-cert", str(root / "tls.crt"), "--tls-key", str(root / "tls.key"))
    echoes = {name: Echo(root, name) for name in ("app", "one", "two")}
    echoes["secure"] = Echo(root, "secure", *tls)
    processor = ExtProcessor("proc")
    ports = {name: free_port() for name in GATEWAYS}
    folder = root / "config"
    folder.mkdir()
    documents = [
        gateway(name, ports[name], http_options=options) for name, options in GATEWAYS.items()
    ]
    documents += [
        upstream("app", echoes["app"].port),
        upstream("proc", processor.port, namespace="gw-system"),
        virtual_service("app", "app.test", "app"),
        HOSTS,
        _ca_secret("dfp-ca", ca.cert_pem),
    ]
    (folder / "all.yaml").write_text("---".join(documents))
    try:
        gw = GwUp(folder, root / "home")
        try:
            for name in ports:
                gw.wait_status(f"Gateway gw-system.{name}", "Accepted")
            setup = Setup(gw, ports, echoes)
            wait_until(lambda: all(_answers(setup, name) for name in ports), what="every listener")
            yield setup
        finally:
            gw.stop()
    finally:
        processor.stop()
        for echo in echoes.values():
            echo.stop()


def _ca_secret(name: str, pem: str) -> str:
    indented = "".join(f"    {line}\n" for line in pem.strip().splitlines())
    return f"""
apiVersion: v1
kind: Secret
metadata: {{name: {name}, namespace: gw-system}}
type: Opaque
stringData:
  ca.crt: |
{indented}"""


def _answers(setup: Setup, gateway: str) -> bool:
    try:
        return setup.send(gateway, "GET", "app.test").status_code == 200
    except httpx.HTTPError:
        return False


def _echoed_by(response: httpx.Response) -> str:
    assert response.status_code == 200, (response.status_code, response.text)
    return response.headers["x-echo-name"]


def test_the_listener_csrf_policy_refuses_a_cross_origin_post(setup: Setup) -> None:
    evil = {"origin": "http://evil.test"}
    refused = setup.send("csrf", "POST", "app.test", headers=evil)
    assert refused.status_code == 403
    assert refused.text == "Invalid origin"
    same = setup.send("csrf", "POST", "app.test", headers={"origin": "http://app.test"})
    assert _echoed_by(same) == "app"
    assert _echoed_by(setup.send("csrf", "GET", "app.test", headers=evil)) == "app"
    assert _echoed_by(setup.send("plain", "POST", "app.test", headers=evil)) == "app"


def test_the_listener_buffer_answers_413_beyond_its_limit(setup: Setup) -> None:
    big = setup.send("buffered", "POST", "app.test", content=b"x" * 100)
    assert big.status_code == 413
    fits = setup.send("buffered", "POST", "app.test", content=b"x" * 10)
    assert _echoed_by(fits) == "app"
    assert fits.json()["body"] == "x" * 10
    assert _echoed_by(setup.send("plain", "POST", "app.test", content=b"x" * 100)) == "app"


def test_dynamic_forward_proxy_uses_the_listener_dns_cache(setup: Setup) -> None:
    """The `forward` gateway's cache holds one host (`maxHosts: 1`): the first host the
    route forwards to is served, a second one overflows it (503); the `plain` gateway's
    cache has Envoy's defaults and serves both."""
    one, two = (f"127.0.0.1:{setup.echoes[n].port}" for n in ("one", "two"))
    first = setup.send("forward", "GET", "forward.test", headers={"x-target": one})
    assert _echoed_by(first) == "one"
    assert first.json()["headers"]["host"] == one
    overflow = setup.send("forward", "GET", "forward.test", headers={"x-target": two})
    assert overflow.status_code == 503
    assert "x-echo-name" not in overflow.headers
    for target, name in ((one, "one"), (two, "two")):
        served = setup.send("plain", "GET", "forward.test", headers={"x-target": target})
        assert _echoed_by(served) == name


def test_dynamic_forward_proxy_speaks_tls_to_the_proxied_hosts(setup: Setup) -> None:
    """`sslConfig` with a CA: the `tls-forward` gateway reaches a TLS host whose
    certificate that CA signed for the host's name, not the same host by another name, nor
    a plain-HTTP one."""
    secure = f"127.0.0.1:{setup.echoes['secure'].port}"
    served = setup.send("tls-forward", "GET", "forward.test", headers={"x-target": secure})
    assert _echoed_by(served) == "secure"
    by_name = secure.replace("127.0.0.1", "localhost")  # a name the certificate lacks
    mismatch = setup.send("tls-forward", "GET", "forward.test", headers={"x-target": by_name})
    assert mismatch.status_code == 503
    plain = f"127.0.0.1:{setup.echoes['one'].port}"
    refused = setup.send("tls-forward", "GET", "forward.test", headers={"x-target": plain})
    assert refused.status_code == 503
    assert "x-echo-name" not in refused.headers


def test_sanitize_cluster_header_removes_the_client_sent_header(setup: Setup) -> None:
    """A client names the cluster in `x-cluster`: the `plain` gateway's route follows it;
    on the `sanitized` gateway the header is gone before routing, so no cluster is named
    (503) and the upstream never sees the request."""
    picked = {"x-cluster": "app_default"}
    assert _echoed_by(setup.send("plain", "GET", "picked.test", headers=picked)) == "app"
    sanitized = setup.send("sanitized", "GET", "picked.test", headers=picked)
    assert sanitized.status_code == 503
    assert "x-echo-name" not in sanitized.headers


def test_the_listener_own_external_processor_sees_its_requests(setup: Setup) -> None:
    processed = setup.send("processed", "GET", "app.test", "/orders")
    assert _echoed_by(processed) == "app"
    assert processed.json()["headers"]["x-ext-proc-proc"] == "/orders"
    plain = setup.send("plain", "GET", "app.test", "/orders")
    assert "x-ext-proc-proc" not in plain.json()["headers"]
