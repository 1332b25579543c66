"""Config churn under load: 100 edits to virtual services, upstreams, a TLS secret and a
service's endpoints while clients keep requesting routes the edits do not touch.

Two client threads hold keep-alive connections (HTTP and HTTPS, SNI chosen per request) to
the unaffected hosts; every answer must be a 2xx from the right upstream, with no
connection error or reset. Each edit is waited for (the control plane has translated it)
before the next, so all 100 reach Envoy, and none is NACKed. At the end every edited route
serves its final state. Real `gw up`, Envoy and `gw echo` upstreams.
"""

from __future__ import annotations

import functools
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509

from tests.support.certs import KeyPair, make_ca, make_cert, tls_secret_yaml
from tests.support.files import save
from tests.support.manifests import service, upstream, virtual_service
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

CA = make_ca("gw churn CA")


def tls_virtual_service(name: str, domain: str, upstream_name: str, secret: str) -> str:
    return virtual_service(name, domain, upstream_name) + (
        f"  sslConfig: {{secretRef: {{name: {secret}, namespace: default}}}}\n"
    )


def orch_virtual_service(name: str, domain: str, service_name: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ["{domain}"]
    routes:
    - matchers: [{{prefix: /}}]
      routeAction:
        single: {{orch: {{ref: {{name: {service_name}, namespace: default, port: 80}}}}}}
"""


def churn_virtual_service(step: int, names: list[str]) -> str:
    """Step `step` of the edited virtual service: 1 to 3 routes, destinations rotating."""
    routes = "".join(
        f"""
    - matchers: [{{prefix: /r{i}}}]
      routeAction:
        single: {{upstream: {{name: {names[(step + i) % 2]}, namespace: default}}}}"""
        for i in range(step % 3 + 1)
    )
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: churn, namespace: default}}
spec:
  virtualHost:
    domains: [churn.test]
    routes:{routes}
"""


@dataclass
class Load:
    """A client loop on keep-alive connections; every failure is kept, with its reason."""

    request: Callable[[httpx.Client], httpx.Response]
    expect: str
    client: httpx.Client
    done: int = 0
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                response = self.request(self.client)
            except httpx.HTTPError as exc:  # connection refused, reset, timeout...
                self.failures.append(repr(exc))
                continue
            echo = response.headers.get("x-echo-name")
            if not response.is_success or echo != self.expect:
                self.failures.append(f"{response.status_code} from {echo}: {response.text[:80]}")
            self.done += 1


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("churn")
    echoes = {name: Echo(work, name) for name in ("stable", "v1", "v2")}
    folder = work / "config"
    folder.mkdir()
    ports = {name: e.port for name, e in echoes.items()}
    save(folder / "upstreams.yaml", "---".join(upstream(n, p) for n, p in ports.items()))
    save(folder / "stable.yaml", virtual_service("stable", "stable.test", "stable"))
    pair = make_cert(["stable-tls.test"], CA)
    save(folder / "stable-tls-secret.yaml", tls_secret_yaml("stable-tls", "default", pair))
    save(
        folder / "stable-tls.yaml",
        tls_virtual_service("stable-tls", "stable-tls.test", "stable", "stable-tls"),
    )
    try:
        gw = GwUp(folder, work / "home")
        try:
            gw.wait_status("VirtualService default.stable-tls", "Accepted")
            yield {"gw": gw, "folder": folder, "ports": ports}
        finally:
            gw.stop()
    finally:
        for echo in echoes.values():
            echo.stop()


def served_certificate(gw: GwUp, sni: str) -> x509.Certificate:
    context = ssl.create_default_context(cadata=CA.cert_pem)
    with httpx.Client(verify=context) as client:
        response = client.get(
            gw.https_url + "/", headers={"host": sni}, extensions={"sni_hostname": sni}
        )
        assert response.headers["x-echo-name"] in ("v1", "v2")
        stream: Any = response.extensions["network_stream"]
        der = stream.get_extra_info("ssl_object").getpeercert(True)
    return x509.load_der_x509_certificate(der)


def test_100_edits_under_load_fail_no_request_on_untouched_routes(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    folder: Path = env["folder"]
    ports: dict[str, int] = env["ports"]
    certs: list[KeyPair] = [make_cert(["churn-tls.test"], CA) for _ in range(21)]

    # The edited resources' first versions.
    save(folder / "churn.yaml", churn_virtual_service(0, ["v1", "v2"]))
    save(folder / "moving.yaml", upstream("moving", ports["v1"]))
    save(folder / "moving-vs.yaml", virtual_service("moving", "moving.test", "moving"))
    save(folder / "churn-tls-secret.yaml", tls_secret_yaml("churn-tls", "default", certs[0]))
    save(
        folder / "churn-tls.yaml",
        tls_virtual_service("churn-tls", "churn-tls.test", "v1", "churn-tls"),
    )
    save(folder / "svc.yaml", service("svc", 80, ports["v1"]))
    save(folder / "svc-vs.yaml", orch_virtual_service("svc", "svc.test", "svc"))
    for name in ("churn", "moving", "churn-tls", "svc"):
        gw.wait_status(f"VirtualService default.{name}", "Accepted")

    tls = ssl.create_default_context(cadata=CA.cert_pem)
    loads = [
        Load(
            lambda c: c.get("/", headers={"host": "stable.test"}),
            "stable",
            httpx.Client(base_url=gw.url, timeout=5),
        ),  # fmt: skip
        Load(
            lambda c: c.get(
                "/",
                headers={"host": "stable-tls.test"},
                extensions={"sni_hostname": "stable-tls.test"},
            ),  # fmt: skip
            "stable",
            httpx.Client(base_url=gw.https_url, verify=tls, timeout=5),
        ),
    ]
    threads = [threading.Thread(target=load.run) for load in loads]
    for thread in threads:
        thread.start()
    kinds = [
        [("churn.yaml", churn_virtual_service(i, ["v1", "v2"])) for i in range(1, 41)],
        [("moving.yaml", upstream("moving", ports["v2" if i % 2 else "v1"])) for i in range(1, 21)],
        [
            ("churn-tls-secret.yaml", tls_secret_yaml("churn-tls", "default", certs[i]))
            for i in range(1, 21)
        ],
        [("svc.yaml", service("svc", 80, ports["v2" if i % 2 else "v1"])) for i in range(1, 21)],
    ]
    # Round-robin over the kinds, so that every kind is edited all along.
    edits = [edit for turn in zip_longest(*kinds) for edit in turn if edit is not None]
    try:
        wait_until(lambda: all(load.done >= 20 for load in loads), what="the client loops")
        for index, (name, text) in enumerate(edits):
            before: int = gw.admin("/proxies")["translation"]["count"]
            save(folder / name, text)
            wait_until(
                functools.partial(translated_after, gw, before),
                what=f"edit {index} of {name} to be translated",
            )
        counts = [load.done for load in loads]
        wait_until(
            lambda: all(load.done >= c + 20 for load, c in zip(loads, counts, strict=True)),
            what="requests after the last edit",
        )
    finally:
        for load in loads:
            load.stop.set()
        for thread in threads:
            thread.join(10)
        for load in loads:
            load.client.close()

    assert len(edits) == 100
    assert [load.failures for load in loads] == [[], []]
    proxies = gw.admin("/proxies")
    assert proxies["nacks"] == 0 and proxies["translation"]["failures"] == 0
    for stat in ("listener_manager.lds.update_rejected", "cluster_manager.cds.update_rejected"):
        assert gw.envoy_stat(stat) == 0, stat

    # Final states: churn step 40 has 2 routes, /r0 → v1, /r1 → v2; moving → v1 (step 20);
    # the 21st certificate; svc's endpoints on v1.
    final = {
        "/r0": "v1",
        "/r1": "v2",
    }
    for path, name in final.items():
        wait_until(
            functools.partial(answers, gw, "churn.test", path, name),
            what=f"churn.test{path} → {name}",
        )
    assert gw.get("/r2", host="churn.test").status_code == 404
    assert gw.get("/", host="moving.test").headers["x-echo-name"] == "v1"
    assert gw.get("/", host="svc.test").headers["x-echo-name"] == "v1"
    assert served_certificate(gw, "churn-tls.test") == certs[20].cert
    statuses = gw.statuses()
    for name in ("churn", "moving", "churn-tls", "svc", "stable", "stable-tls"):
        assert statuses[f"VirtualService default.{name}"]["state"] == "Accepted", name


def translated_after(gw: GwUp, count: int) -> bool:
    return bool(gw.admin("/proxies")["translation"]["count"] > count)


def answers(gw: GwUp, host: str, path: str, name: str) -> bool:
    return bool(gw.get(path, host=host).headers.get("x-echo-name") == name)
