"""How Envoy reaches upstreams, end to end: TLS origination from an Upstream's `sslConfig`
(statuses for a broken TLS section, traffic over TLS once it is fixed), and static hosts
given by name, resolved through DNS.

The TLS upstream is `gw echo --tls-cert --tls-key --tls-client-ca`: it serves HTTPS only and
requires a client certificate signed by the test CA, so a 200 through the gateway shows that
Envoy spoke TLS, presented the secret's certificate and accepted the upstream's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.certs import KeyPair, make_ca, make_cert, tls_secret_yaml
from tests.support.files import save as write
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


@dataclass
class Env:
    gw: GwUp
    folder: Path
    ca: KeyPair
    client: KeyPair
    secure_port: int
    verify_only_port: int
    plain_port: int


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    work = tmp_path_factory.mktemp("upstream-tls")
    ca = make_ca()
    server, client = make_cert(["secure.test"], ca), make_cert(["gw-client"], ca)
    files = {"ca.crt": ca.cert_pem, "tls.crt": server.cert_pem, "tls.key": server.key_pem}
    for name, text in files.items():
        (work / name).write_text(text)
    tls = ["--tls-cert", str(work / "tls.crt"), "--tls-key", str(work / "tls.key")]
    echoes = [
        Echo(work, "secure", *tls, "--tls-client-ca", str(work / "ca.crt")),
        Echo(work, "verify-only", *tls),
        Echo(work, "plain"),
    ]
    folder = work / "config"
    folder.mkdir()
    try:
        gw = GwUp(folder, work / "home")
        try:
            yield Env(gw, folder, ca, client, *(e.port for e in echoes))
        finally:
            gw.stop()
    finally:
        for echo in echoes:
            echo.stop()


def upstream(name: str, port: int, ssl_config: str) -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: default}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {port}}}]
  sslConfig:
{ssl_config}
"""


def virtual_service(name: str, upstream_name: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.example.com]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: {upstream_name}}}}}}}
"""


def mismatched_secret(name: str, pair: KeyPair) -> str:
    """A TLS secret whose key belongs to another certificate."""
    other = make_cert(["gw-client"])
    return tls_secret_yaml(name, "default", pair).replace(
        tls_secret_yaml(name, "default", pair).split("tls.key: ")[1],
        tls_secret_yaml(name, "default", other).split("tls.key: ")[1],
    )


SECURE_TLS = """\
    secretRef: {name: upstream-tls, namespace: default}
    sni: secure.test
    verifySubjectAltName: [%s]"""


def test_broken_tls_rejects_upstream_and_routes_until_the_secret_is_fixed(env: Env) -> None:
    gw, folder = env.gw, env.folder
    write(folder / "secret.yaml", mismatched_secret("upstream-tls", env.client))
    write(folder / "upstream.yaml", upstream("secure", env.secure_port, SECURE_TLS % "secure.test"))
    write(folder / "vs.yaml", virtual_service("secure", "secure"))

    status = gw.wait_status("Upstream default.secure", "Rejected")
    assert status["reason"] == (
        "1 error occurred:\n\t* spec.sslConfig.secretRef: default.upstream-tls is not a valid "
        "TLS secret: the private key does not match the certificate\n\n"
    )
    vs = gw.wait_status("VirtualService default.secure", "Rejected")
    assert vs["reason"] == (
        "1 error occurred:\n\t* spec.virtualHost.routes[0].routeAction.single.upstream: "
        "Upstream default.secure is rejected; fix it first (see its status)\n\n"
    )
    assert gw.get("/", host="secure.example.com").status_code == 404  # never accepted

    write(folder / "secret.yaml", tls_secret_yaml("upstream-tls", "default", env.client, env.ca))
    gw.wait_status("Upstream default.secure", "Accepted")
    gw.wait_status("VirtualService default.secure", "Accepted")
    response = wait_until(
        lambda: (r := gw.get("/tls", host="secure.example.com")).status_code == 200 and r,
        what="traffic over TLS",
    )
    assert response.headers["x-echo-name"] == "secure"
    assert response.json()["scheme"] == "https"
    assert response.json()["path"] == "/tls"


def test_the_upstream_certificate_is_verified(env: Env) -> None:
    """With a subject alt name the certificate does not carry, the handshake fails (503);
    with the right one, traffic flows again."""
    gw, folder = env.gw, env.folder
    write(folder / "secret.yaml", tls_secret_yaml("upstream-tls", "default", env.client, env.ca))
    write(folder / "upstream.yaml", upstream("secure", env.secure_port, SECURE_TLS % "other.test"))
    write(folder / "vs.yaml", virtual_service("secure", "secure"))
    gw.wait_status("Upstream default.secure", "Accepted")
    wait_until(
        lambda: gw.get("/", host="secure.example.com").status_code == 503,
        what="the handshake to fail on the wrong name",
    )
    write(folder / "upstream.yaml", upstream("secure", env.secure_port, SECURE_TLS % "secure.test"))
    wait_until(
        lambda: gw.get("/", host="secure.example.com").status_code == 200,
        what="the handshake to succeed on the right name",
    )


def test_a_secret_with_only_a_ca_verifies_the_upstream(env: Env) -> None:
    gw, folder = env.gw, env.folder
    ca_only = f"""
apiVersion: v1
kind: Secret
metadata: {{name: upstream-ca, namespace: default}}
stringData:
  ca.crt: |
{"".join("    " + line + chr(10) for line in env.ca.cert_pem.splitlines())}"""
    write(folder / "ca-secret.yaml", ca_only)
    write(
        folder / "verify-only.yaml",
        upstream(
            "verify-only",
            env.verify_only_port,
            "    secretRef: {name: upstream-ca}\n    sni: secure.test",
        ),
    )
    write(folder / "verify-only-vs.yaml", virtual_service("verify-only", "verify-only"))
    gw.wait_status("Upstream default.verify-only", "Accepted")
    response = wait_until(
        lambda: (r := gw.get("/", host="verify-only.example.com")).status_code == 200 and r,
        what="traffic to the verified upstream",
    )
    assert response.json()["scheme"] == "https"


def test_static_host_names_resolve_through_dns(env: Env) -> None:
    gw, folder = env.gw, env.folder
    write(
        folder / "dns.yaml",
        f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: by-name, namespace: default}}
spec:
  static:
    hosts: [{{addr: localhost, port: {env.plain_port}}}]
"""
        + "---"
        + virtual_service("by-name", "by-name"),
    )
    gw.wait_status("VirtualService default.by-name", "Accepted")
    clusters = gw.admin("/snapshots/xds")["gw-system~gateway-proxy"]["clusters"]
    assert next(c for c in clusters if c["name"] == "by-name_default")["type"] == "STRICT_DNS"
    response = wait_until(
        lambda: (r := gw.get("/", host="by-name.example.com")).status_code == 200 and r,
        what="the host name to resolve",
    )
    assert response.headers["x-echo-name"] == "plain"
