"""xDS over mutual TLS, end to end: `gw certgen --out` issues the certificates, `gw
controlplane --xds-certs` serves with them, real Envoys (`gw proxy --xds-certs`) and the
extauth server connect with theirs, and rotation happens under a running proxy.

Checked: a proxy with its own certificate gets config; a certificate naming another role, a
certificate of another CA, and no certificate at all get nothing (and the refusal is
logged); each role receives only what it needs: the rate-limit server no private key and no
client secret, a proxy no client secret; a rotation (same CA, then a new CA) is picked up by
the control plane and by Envoy without a restart, the connected Envoy keeps getting config,
and after the control plane restarts with the new certificates every client reconnects.
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from cryptography import x509

from gw.defaults import XDS_CLUSTER
from tests.support.ads import exchange, request
from tests.support.certs import make_ca, make_cert, tls_secret_yaml
from tests.support.extauth_manifests import auth_config, extauth_backends
from tests.support.files import save
from tests.support.ports import free_port
from tests.support.processes import ControlPlane, Process, gw_command, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

NS = "gw-system"
PROXY = f"{NS}~gateway-proxy"
EXTAUTH = f"{NS}~extauth"
RATELIMIT = f"{NS}~ratelimit"
STRUCT = "type.googleapis.com/google.protobuf.Struct"
ENVOY_TYPES = {
    "type.googleapis.com/envoy.config.cluster.v3.Cluster": (),
    "type.googleapis.com/envoy.config.listener.v3.Listener": (),
    "type.googleapis.com/envoy.config.route.v3.RouteConfiguration": ("*",),
    "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment": ("*",),
    "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret": ("*",),
}
CLIENT_SECRET = "oauth-client-secret-7f3a9c"
#: Where the manifests say the extauth server and the protected app are (never called).
EXTAUTH_PORT, APP_PORT = free_port(), free_port()
TLS_PAIR = make_cert(["secure.test"], make_ca())
#: What must never reach a role that does not need it.
TLS_KEY_BODY = TLS_PAIR.key_pem.splitlines()[1]


def certgen(out: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "gw", "certgen", "--out", str(out), *args],
        check=True,
        capture_output=True,
        timeout=60,
    )


def manifests(body: str) -> str:
    """A plain virtual service (`body` answers), a TLS one (its key goes to the proxy over
    SDS), an OIDC AuthConfig (its client secret goes to the extauth server), and a
    RateLimitConfig (its descriptors go to the rate-limit server)."""
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: web, namespace: default}}
spec:
  virtualHost:
    domains: [web.test]
    routes:
    - matchers: [{{prefix: /}}]
      directResponseAction: {{status: 200, body: {body}}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: secure, namespace: default}}
spec:
  sslConfig: {{secretRef: {{name: secure-tls, namespace: default}}}}
  virtualHost:
    domains: [secure.test]
    options:
      extauth: {{configRef: {{name: login, namespace: gw-system}}}}
      rateLimitConfigs: {{refs: [{{name: per-client, namespace: default}}]}}
    routes:
    - matchers: [{{prefix: /}}]
      directResponseAction: {{status: 200, body: secure}}
---
apiVersion: ratelimit.vendor.io/v1alpha1
kind: RateLimitConfig
metadata: {{name: per-client, namespace: default}}
spec:
  raw:
    descriptors: [{{key: client, rateLimit: {{unit: MINUTE, requestsPerUnit: 3}}}}]
    rateLimits: [{{actions: [{{requestHeaders: {{headerName: X-Client, descriptorKey: client}}}}]}}]
---
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  extauth: {{extauthzServerRef: {{name: extauth, namespace: gw-system}}}}
  ratelimitServer: {{ratelimitServerRef: {{name: extauth, namespace: gw-system}}}}
---
{tls_secret_yaml("secure-tls", "default", TLS_PAIR)}
---
{extauth_backends(EXTAUTH_PORT, APP_PORT, CLIENT_SECRET)}
---
{auth_config("login", "https://secure.test", "https://idp.invalid")}
"""


class Plane(ControlPlane):
    """The control plane with its certificates (`certs/controlplane`), logging at debug."""

    def __init__(self, folder: Path, certs: Path, work: Path) -> None:
        self.certs = certs
        extra = ("--xds-certs", str(certs / "controlplane"), "--log-level", "debug")
        super().__init__(folder, work, *extra)

    def connections(self, role: str) -> list[dict[str, Any]]:
        return [c for c in self.admin("/proxies")["connections"] if c["role"] == role]


class Proxy:
    """`gw proxy` with the certificates of `certs` (or none)."""

    def __init__(self, plane: Plane, workdir: Path, name: str, certs: Path | None) -> None:
        self.admin_port = free_port()
        self.name = name
        args = ["--xds-certs", str(certs)] if certs is not None else ["--insecure-xds"]
        self.process = Process(
            gw_command(
                "proxy",
                "--xds",
                plane.xds,
                "--admin-port",
                str(self.admin_port),
                "--node-id",
                name,
                "--concurrency",
                "1",
                *args,
            ),  # fmt: skip
            gw_env(workdir / "home"),
            workdir / f"{name}.log",
        )
        self.http_port = plane.http_port

    def get(self, host: str) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.http_port}/", headers={"host": host}, timeout=5)

    def serves(self, host: str, body: str) -> bool:
        try:
            return self.get(host).text == body
        except httpx.HTTPError:
            return False

    def stat(self, name: str) -> int:
        """A stat, from Envoy's own admin (its abstract socket), which answers before the
        first configuration arrives, unlike the admin port."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as admin:
            admin.settimeout(5)
            admin.connect(f"\0gw-proxy-admin-{self.name}")
            request = f"GET /stats?filter=^{name}$ HTTP/1.1\r\nhost: envoy\r\nconnection: close"
            admin.sendall(request.encode() + b"\r\n\r\n")
            answer = b""
            while chunk := admin.recv(65536):
                answer += chunk
        found = re.search(rf"^{re.escape(name)}: (\d+)$", answer.decode(), re.MULTILINE)
        return int(found.group(1)) if found else 0

    def client_certificate_serial(self) -> int:
        """The serial of the client certificate Envoy holds for the xDS cluster."""
        certs = httpx.get(f"http://127.0.0.1:{self.admin_port}/certs", timeout=5).json()
        (serial,) = {
            chain["serial_number"]
            for entry in certs["certificates"]
            for chain in entry.get("cert_chain", [])
            if {"uri": f"urn:gw:role:{PROXY}"} in chain.get("subject_alt_names", [])
        }
        return int(serial, 16)

    def stop(self) -> None:
        self.process.stop()


def serial_in(folder: Path) -> int:
    return x509.load_pem_x509_certificate((folder / "tls.crt").read_bytes()).serial_number


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("xds-mtls")


@pytest.fixture(scope="module")
def certs(workdir: Path) -> Path:
    certgen(workdir / "certs")
    return workdir / "certs"


@pytest.fixture(scope="module")
def plane(workdir: Path, certs: Path) -> Iterator[Plane]:
    folder = workdir / "config"
    folder.mkdir()
    save(folder / "all.yaml", manifests("v1"))
    process = Plane(folder, certs, workdir)
    yield process
    process.process.stop()


@pytest.fixture(scope="module")
def proxy(plane: Plane, workdir: Path, certs: Path) -> Iterator[Proxy]:
    started = Proxy(plane, workdir, "gateway-proxy-0", certs / "gateway-proxy")
    yield started
    started.stop()


def test_envoy_gets_its_config_over_mutual_tls(plane: Plane, proxy: Proxy) -> None:
    wait_until(lambda: proxy.serves("web.test", "v1"), timeout=30, what="the proxy to serve v1")
    (connection,) = plane.connections(PROXY)
    assert connection["node"] == "gateway-proxy-0"
    assert proxy.stat(f"cluster.{XDS_CLUSTER}.ssl.handshake") >= 1
    assert proxy.client_certificate_serial() == serial_in(plane.certs / "gateway-proxy")


@pytest.mark.parametrize("case", ["another role", "another CA", "no certificate"])
def test_a_proxy_without_its_own_certificate_gets_nothing(
    plane: Plane, proxy: Proxy, workdir: Path, certs: Path, case: str
) -> None:
    if case == "another role":
        presented: Path | None = certs / "extauth"
    elif case == "another CA":
        # It trusts the control plane, but its own certificate is another CA's.
        certgen(workdir / "other-ca")
        presented = workdir / "stranger"
        presented.mkdir()
        (presented / "ca.crt").write_bytes((certs / "gateway-proxy" / "ca.crt").read_bytes())
        for name in ("tls.crt", "tls.key"):
            other = workdir / "other-ca" / "gateway-proxy" / name
            (presented / name).write_bytes(other.read_bytes())
    else:
        presented = None
    intruder = Proxy(plane, workdir, f"intruder-{case.replace(' ', '-')}", presented)
    try:
        wait_until(
            lambda: intruder.stat(REFUSED[case]) >= 2,
            what=f"the intruder's xDS connections to fail ({REFUSED[case]})",
        )
        if case == "another role":
            assert (
                "xds: refused intruder-another-role from ipv4:127.0.0.1:" in plane.process.output()
            )
            assert (
                f"gRPC config stream to {XDS_CLUSTER} closed: 7, node announces role "
                "'gw-system~gateway-proxy' but its certificate is for 'gw-system~extauth'"
            ) in intruder.process.output()
        # Not kept connected: each retry's stream is up only until the refusal ends it
        # (a delta stream retries within a few hundred ms, so a single look may catch one).
        wait_until(
            lambda: intruder.stat("control_plane.connected_state") == 0,
            what="the intruder's stream to be closed",
        )
        assert intruder.stat("cluster_manager.cds.update_success") == 0
        admitted = [c["node"] for c in plane.admin("/proxies")["connections"] if c["role"]]
        assert intruder.name not in admitted
    finally:
        intruder.stop()


#: The Envoy stat that counts the intruder's failures: a refused stream (with a gRPC status),
#: or a connection the control plane closed (its TLS refused the client).
REFUSED = {
    "another role": f"cluster.{XDS_CLUSTER}.upstream_rq_completed",
    "another CA": f"cluster.{XDS_CLUSTER}.upstream_cx_destroy_remote",
    "no certificate": f"cluster.{XDS_CLUSTER}.upstream_cx_destroy_remote",
}


async def subscribe(
    address: str, certs: Path, role: str, types: dict[str, tuple[str, ...]]
) -> tuple[bytes, grpc.aio.AioRpcError | None]:
    """Subscribe to `types` as `role` over mutual TLS with `certs`: every byte received
    (until each type answered once, or the stream failed) and the failure."""
    from gw.xds.tls import secure_channel

    requests = [
        request(role if i == 0 else None, type_url, names)
        for i, (type_url, names) in enumerate(types.items())
    ]
    async with secure_channel(address, certs, role) as channel:
        responses, error = await exchange(
            channel, requests, lambda got: {r.type_url for r in got} == set(types)
        )
    return b"".join(r.SerializeToString() for r in responses), error


def test_the_rate_limit_server_never_receives_a_private_key_or_a_client_secret(
    plane: Plane, certs: Path
) -> None:
    own, refused = asyncio.run(subscribe(plane.xds, certs / "ratelimit", RATELIMIT, {STRUCT: ()}))
    assert refused is None and b"per-client" in own  # its own configuration: descriptors
    assert CLIENT_SECRET.encode() not in own and b"PRIVATE KEY" not in own
    for type_url, names in ENVOY_TYPES.items():
        got, refused = asyncio.run(
            subscribe(plane.xds, certs / "ratelimit", RATELIMIT, {type_url: names})
        )
        assert got == b"" and refused is not None
        assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
    # Announcing the extauth role with the rate-limit certificate: refused too.
    got, refused = asyncio.run(subscribe(plane.xds, certs / "ratelimit", EXTAUTH, {STRUCT: ()}))
    assert got == b"" and refused is not None
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED


def test_a_proxy_receives_its_tls_keys_but_never_a_client_secret(plane: Plane, certs: Path) -> None:
    received, refused = asyncio.run(
        subscribe(plane.xds, certs / "gateway-proxy", PROXY, ENVOY_TYPES)
    )
    assert refused is None
    assert TLS_KEY_BODY.encode() in received  # its listener's key, over SDS
    assert CLIENT_SECRET.encode() not in received
    got, refused = asyncio.run(subscribe(plane.xds, certs / "gateway-proxy", PROXY, {STRUCT: ()}))
    assert got == b"" and refused is not None
    assert refused.code() == grpc.StatusCode.PERMISSION_DENIED


def test_the_extauth_server_receives_its_client_secret_and_no_private_key(
    plane: Plane, certs: Path, workdir: Path
) -> None:
    received, refused = asyncio.run(subscribe(plane.xds, certs / "extauth", EXTAUTH, {STRUCT: ()}))
    assert refused is None and CLIENT_SECRET.encode() in received
    assert TLS_KEY_BODY.encode() not in received
    # The extauth server itself, over mutual TLS.
    port = free_port()
    server = Process(
        gw_command(
            "extauth",
            "--xds",
            plane.xds,
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--xds-certs",
            str(certs / "extauth"),
        ),  # fmt: skip
        gw_env(workdir / "home"),
        workdir / "extauth.log",
    )
    try:
        wait_until(
            lambda: any(
                all(t["acked"] for t in c["types"].values()) and c["types"]
                for c in plane.connections(EXTAUTH)
            ),
            what="the extauth server to ack its config",
        )
    finally:
        server.stop()


def test_rotation_under_a_running_proxy(
    plane: Plane, proxy: Proxy, certs: Path, workdir: Path
) -> None:
    """Same CA: every certificate re-issued; then a new CA. The connected Envoy keeps its
    stream and gets changes; it loads its new client certificate from the watched folder;
    the control plane serves its new certificate from the next handshake (a second Envoy
    connects after the rotation); after a restart of the control plane, Envoy reconnects
    with the new certificates and gets what changed meanwhile."""
    wait_until(lambda: proxy.serves("web.test", "v1"), timeout=30, what="v1")
    (before,) = plane.connections(PROXY)
    for extra in ((), ("--rotate-ca",)):
        certgen(certs, *extra)
        wanted = serial_in(certs / "gateway-proxy")
        wait_until(
            lambda wanted=wanted: proxy.client_certificate_serial() == wanted,
            what="Envoy to load its rotated client certificate",
        )
    save(plane.folder / "all.yaml", manifests("v2"))
    wait_until(lambda: proxy.serves("web.test", "v2"), what="v2 on the same stream")
    assert [c["id"] for c in plane.connections(PROXY)] == [before["id"]]
    second = Proxy(plane, workdir, "gateway-proxy-1", certs / "gateway-proxy")
    try:
        wait_until(lambda: len(plane.connections(PROXY)) == 2, timeout=30, what="a second proxy")
        assert "certificates in" in plane.process.output()  # reloaded, no restart
        assert plane.starts == 1
    finally:
        second.stop()
    plane.process.stop()
    save(plane.folder / "all.yaml", manifests("v3"))
    plane.start()
    wait_until(lambda: proxy.serves("web.test", "v3"), timeout=30, what="v3 after the restart")
    (after,) = plane.connections(PROXY)
    assert after["node"] == "gateway-proxy-0"
