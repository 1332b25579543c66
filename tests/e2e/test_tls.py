"""TLS termination end to end: `gw up` with real Envoy, certificates made here, real TLS
handshakes from Python's `ssl` (SNI chosen per connection, the peer certificate checked
against the one the test put in the secret), `gw echo` upstreams behind.

One `gw up` serves the module. Tests that edit the folder put it back as they found it.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509

from tests.support.certs import KeyPair, make_ca, make_cert, tls_secret_yaml
from tests.support.files import save as write
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

CA = make_ca("gw e2e CA")
CLIENT_CA = make_ca("gw e2e client CA")
VS_C = "VirtualService default.c"


@dataclass(frozen=True)
class Reply:
    certificate: x509.Certificate
    alpn: str | None
    status: int
    headers: dict[str, str]
    body: bytes


def https_get(
    port: int,
    sni: str | None,
    *,
    host: str | None = None,
    path: str = "/",
    trust: KeyPair | None = CA,
    alpn: list[str] | None = None,
    client: Path | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """One request on a new TLS connection to 127.0.0.1:`port` sending SNI `sni` (None: no
    SNI). With `trust`, the server certificate must chain to it and name `sni`. `client`: a
    PEM file holding a client certificate and its key. `headers`: more request headers."""
    context = ssl.create_default_context()
    if trust is None:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        context.load_verify_locations(cadata=trust.cert_pem)
    if client is not None:
        context.load_cert_chain(client)
    if alpn:
        context.set_alpn_protocols(alpn)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname=sni) as tls:
            der = tls.getpeercert(binary_form=True)
            assert der is not None
            negotiated = tls.selected_alpn_protocol()
            if negotiated == "h2":  # the handshake is what was asked for
                return Reply(x509.load_der_x509_certificate(der), negotiated, 0, {}, b"")
            extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
            request = (
                f"GET {path} HTTP/1.1\r\nHost: {host or sni}\r\n{extra}Connection: close\r\n\r\n"
            )
            tls.sendall(request.encode())
            response = http.client.HTTPResponse(tls)
            response.begin()
            body = response.read()
            headers = {k.lower(): v for k, v in response.getheaders()}
            return Reply(
                x509.load_der_x509_certificate(der), negotiated, response.status, headers, body
            )


def upstream(name: str, port: int) -> str:
    return f"""apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: gw-system}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {port}}}]
"""


def virtual_service(
    name: str, domains: list[str], target: str, *, secret: str | None, sni: tuple[str, ...] = ()
) -> str:
    doc = f"""apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: {domains}
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: {target}, namespace: gw-system}}}}}}
"""
    if secret is not None:
        doc += f"  sslConfig:\n    secretRef: {{name: {secret}, namespace: default}}\n"
        if sni:
            doc += f"    sniDomains: {list(sni)}\n"
    return doc


@dataclass
class Env:
    gw: GwUp
    folder: Path
    certs: dict[str, KeyPair]

    def get(self, sni: str | None, **kwargs: Any) -> Reply:
        return https_get(self.gw.https_port, sni, **kwargs)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    work = tmp_path_factory.mktemp("tls")
    echoes = [Echo(work, "alpha"), Echo(work, "beta")]
    folder = work / "config"
    folder.mkdir()
    certs = {
        "a": make_cert(["a.test"], CA),
        "b": make_cert(["b.test", "*.b.test"], CA),
        "c": make_cert(["c.test"], CA),
    }
    (folder / "upstreams.yaml").write_text(
        upstream("alpha", echoes[0].port) + "---\n" + upstream("beta", echoes[1].port)
    )
    for name, pair in certs.items():
        (folder / f"tls-{name}.yaml").write_text(tls_secret_yaml(f"tls-{name}", "default", pair))
    (folder / "a.yaml").write_text(virtual_service("a", ["a.test"], "alpha", secret="tls-a"))
    (folder / "b.yaml").write_text(
        virtual_service("b", ["b.test", "*.b.test"], "beta", secret="tls-b")
    )
    (folder / "c.yaml").write_text(virtual_service("c", ["c.test"], "alpha", secret="tls-c"))
    # mutual TLS: the secret's ca.crt is the CA client certificates must chain to
    (folder / "tls-m.yaml").write_text(
        tls_secret_yaml("tls-m", "default", make_cert(["m.test"], CA), ca=CLIENT_CA)
    )
    (folder / "m.yaml").write_text(virtual_service("m", ["m.test"], "beta", secret="tls-m"))
    (folder / "plain.yaml").write_text(
        virtual_service("plain", ["plain.test"], "beta", secret=None)
    )
    gw = GwUp(folder, work / "home")
    try:
        yield Env(gw, folder, certs)
    finally:
        gw.stop()
        for echo in echoes:
            echo.stop()


def test_sni_selects_the_certificate_and_the_upstream(env: Env) -> None:
    for sni, cert, upstream_name in (
        ("a.test", env.certs["a"], "alpha"),
        ("b.test", env.certs["b"], "beta"),
        ("www.b.test", env.certs["b"], "beta"),  # the *.b.test wildcard
    ):
        reply = env.get(sni, path="/hello?x=1")
        assert reply.certificate == cert.cert, sni
        assert reply.status == 200
        assert reply.headers["x-echo-name"] == upstream_name
        echoed = httpx.Response(200, content=reply.body).json()
        assert echoed["path"] == "/hello" and echoed["query"] == "x=1"
        # Envoy tells the upstream the client came over TLS.
        assert echoed["headers"]["x-forwarded-proto"] == "https"
    # ALPN: h2 is offered by default, HTTP/1.1 still works for clients without it.
    assert env.get("a.test", alpn=["h2", "http/1.1"]).alpn == "h2"
    assert env.get("a.test", alpn=["http/1.1"]).alpn == "http/1.1"
    # A port in Host (browsers send one when the port is not 443) does not matter, and the
    # upstream gets the Host as the client sent it.
    port = env.gw.https_port
    for sni, host in (("a.test", f"a.test:{port}"), ("www.b.test", f"www.b.test:{port}")):
        reply = env.get(sni, host=host)
        assert reply.status == 200, host
        assert httpx.Response(200, content=reply.body).json()["headers"]["host"] == host
    for key in ("VirtualService default.a", "VirtualService default.b"):
        assert env.gw.status(key)["state"] == "Accepted"  # type: ignore[index]


def test_a_virtual_host_is_reachable_only_through_its_own_sni(env: Env) -> None:
    reply = env.get("a.test", host="b.test")
    assert reply.certificate == env.certs["a"].cert
    assert reply.status == 404


def test_a_secret_with_a_ca_requires_client_certificates(env: Env, tmp_path: Path) -> None:
    def client_file(pair: KeyPair, name: str) -> Path:
        path = tmp_path / name
        path.write_text(pair.cert_pem + pair.key_pem)
        return path

    trusted = client_file(make_cert(["client.test"], CLIENT_CA), "trusted.pem")
    reply = env.get("m.test", client=trusted)
    assert reply.status == 200 and reply.headers["x-echo-name"] == "beta"
    # no client certificate, or one from a CA the secret does not name: refused
    stranger = client_file(make_cert(["client.test"], CA), "stranger.pem")
    for client in (None, stranger):
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            env.get("m.test", client=client)


def one_way(one_way_tls: bool) -> str:
    """VirtualService `o`: a secret with a client CA, `verifySubjectAltName`, and
    `oneWayTls` as given."""
    return virtual_service("o", ["o.test"], "alpha", secret="tls-o") + (
        f"    oneWayTls: {str(one_way_tls).lower()}\n    verifySubjectAltName: [client.test]\n"
    )


def test_one_way_tls_asks_no_client_certificate_even_with_subject_alt_names(
    env: Env, tmp_path: Path
) -> None:
    """oneWayTls is server-only TLS: with it a client without a certificate gets through
    although the secret has a CA and names are listed to check (a warning says they have
    no effect); without it the same client is refused and the named certificate is needed."""
    trusted = tmp_path / "trusted.pem"
    pair = make_cert(["client.test"], CLIENT_CA)
    trusted.write_text(pair.cert_pem + pair.key_pem)
    write(
        env.folder / "tls-o.yaml",
        tls_secret_yaml("tls-o", "default", make_cert(["o.test"], CA), ca=CLIENT_CA),
    )
    write(env.folder / "o.yaml", one_way(True))
    try:
        status = env.gw.wait_status("VirtualService default.o", "Warning")
        assert "spec.sslConfig.verifySubjectAltName: no effect with oneWayTls: true" in str(
            status["reason"]
        )
        reply = wait_until(lambda: _answered(env, "o.test"), what="o.test to serve")
        assert reply.status == 200 and reply.headers["x-echo-name"] == "alpha"

        write(env.folder / "o.yaml", one_way(False))
        env.gw.wait_status("VirtualService default.o", "Accepted")
        wait_until(lambda: _refused(env, "o.test"), what="o.test to require a certificate")
        reply = env.get("o.test", client=trusted)
        assert reply.status == 200 and reply.headers["x-echo-name"] == "alpha"
    finally:
        (env.folder / "o.yaml").unlink()
        (env.folder / "tls-o.yaml").unlink()


def _answered(env: Env, sni: str) -> Reply | None:
    try:
        return env.get(sni)
    except (ssl.SSLError, ConnectionResetError):
        return None


def test_plain_http_virtual_services_keep_working(env: Env) -> None:
    response = env.gw.get("/", host="plain.test")
    assert response.status_code == 200 and response.headers["x-echo-name"] == "beta"
    # a TLS virtual service is served on the HTTPS listener only
    assert env.gw.get("/", host="a.test").status_code == 404


def test_unknown_sni_is_refused_until_a_default_chain_exists(env: Env) -> None:
    for sni in ("unknown.test", None):
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            env.get(sni, trust=None)
    fallback = make_cert(["fallback.test"], CA)
    write(env.folder / "tls-fallback.yaml", tls_secret_yaml("tls-fallback", "default", fallback))
    write(
        env.folder / "fallback.yaml",
        virtual_service("fallback", ["*"], "beta", secret="tls-fallback"),
    )
    try:
        reply = wait_until(
            lambda: env.get("unknown.test", trust=None), what="the default chain to serve"
        )
        assert reply.certificate == fallback.cert
        assert reply.status == 200 and reply.headers["x-echo-name"] == "beta"
        no_sni = env.get(None, trust=None, host="whatever.test")
        assert no_sni.certificate == fallback.cert and no_sni.status == 200
        # named chains still win over the default
        assert env.get("a.test").certificate == env.certs["a"].cert
    finally:
        (env.folder / "fallback.yaml").unlink()
        (env.folder / "tls-fallback.yaml").unlink()
    wait_until(lambda: _refused(env, "unknown.test"), what="the default chain to go")


def _refused(env: Env, sni: str) -> bool:
    try:
        env.get(sni, trust=None)
    except (ssl.SSLError, ConnectionResetError):
        return True
    return False


def test_rotation_under_a_client_loop_fails_no_request(env: Env) -> None:
    """A new connection per request, so every request shows which certificate is served."""
    old, new = env.certs["a"], make_cert(["a.test"], CA)
    modified_before = env.gw.envoy_stat("listener_manager.listener_modified")
    sds_before = env.gw.envoy_stat("sds.default_tls-a.update_success")
    seen: list[x509.Certificate] = []
    failures: list[str] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                reply = env.get("a.test")
            except Exception as exc:  # noqa: BLE001 (every failure counts)
                failures.append(repr(exc))
                continue
            if reply.status != 200 or reply.headers.get("x-echo-name") != "alpha":
                failures.append(f"{reply.status} {reply.headers}")
            seen.append(reply.certificate)

    client = threading.Thread(target=loop)
    client.start()
    try:
        wait_until(lambda: len(seen) >= 20, what="the client loop to run")
        write(env.folder / "tls-a.yaml", tls_secret_yaml("tls-a", "default", new))
        wait_until(lambda: new.cert in seen, what="the rotated certificate to be served")
        count = len(seen)
        wait_until(lambda: len(seen) >= count + 20, what="requests after the rotation")
    finally:
        stop.set()
        client.join(10)
    env.certs["a"] = new
    assert failures == []
    first_new = seen.index(new.cert)
    assert seen[0] == old.cert
    assert all(c == new.cert for c in seen[first_new:]), "the old certificate came back"
    # an SDS update only: the listener was not modified (nothing drained)
    assert env.gw.envoy_stat("sds.default_tls-a.update_success") > sds_before
    assert env.gw.envoy_stat("listener_manager.listener_modified") == modified_before
    assert env.gw.envoy_stat("listener_manager.lds.update_rejected") == 0


def test_bad_secrets_are_statuses_and_the_last_good_certificate_serves_on(env: Env) -> None:
    good = env.certs["c"]
    path = env.folder / "tls-c.yaml"
    other = make_cert(["c.test"], CA)
    mismatched = KeyPair(other.cert_pem, good.key_pem, other.cert, good.key)
    garbled = KeyPair(
        "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n",
        good.key_pem,
        good.cert,
        good.key,
    )
    cases = [
        (mismatched, "default.tls-c is not a valid TLS secret: the private key does not match"),
        (garbled, "default.tls-c tls.crt is not a valid TLS secret: tls: failed to find any PEM"),
        (None, "SSL secret not found: list did not find secret default.tls-c"),
    ]
    try:
        for pair, message in cases:
            if pair is None:
                path.unlink()
            else:
                write(path, tls_secret_yaml("tls-c", "default", pair))
            status = wait_until(
                functools.partial(_reason_has, env, VS_C, message), what=f"status {message!r}"
            )
            assert status["state"] == "Rejected"
            assert status["reason"].startswith("1 error occurred:\n\t* spec.sslConfig.secretRef: ")
            assert status["messages"] == ["its last accepted configuration is still being served"]
            assert env.get("c.test").certificate == good.cert
            assert env.get("a.test").status == 200  # others untouched
            assert env.gw.status("VirtualService default.a")["state"] == "Accepted"  # type: ignore[index]

        expired = make_cert(["c.test"], CA, expired=True)
        write(path, tls_secret_yaml("tls-c", "default", expired))
        status = wait_until(
            lambda: _reason_has(env, VS_C, "the certificate in default.tls-c expired on"),
            what="the expiry warning",
        )
        assert status["state"] == "Warning"
        # A warning does not block: the expired certificate is what is served now.

        def served_expired() -> Reply | None:
            reply = env.get("c.test", trust=None)
            return reply if reply.certificate == expired.cert else None

        reply = wait_until(served_expired, what="the expired certificate to be served")
        assert reply.status == 200
        with pytest.raises(ssl.SSLCertVerificationError):
            env.get("c.test")
    finally:
        write(path, tls_secret_yaml("tls-c", "default", good))
    env.gw.wait_status(VS_C, "Accepted")


def test_a_new_virtual_service_with_a_missing_secret_never_serves(env: Env) -> None:
    write(env.folder / "d.yaml", virtual_service("d", ["d.test"], "alpha", secret="nope"))
    try:
        status = env.gw.wait_status("VirtualService default.d", "Rejected")
        assert status["reason"] == (
            "1 error occurred:\n\t* spec.sslConfig.secretRef: "
            "SSL secret not found: list did not find secret default.nope\n\n"
        )
        assert _refused(env, "d.test")
    finally:
        (env.folder / "d.yaml").unlink()


def test_gwctl_shows_ssl_and_secrets_never_leak(env: Env) -> None:
    gwctl = Path(sys.executable).with_name("gwctl")
    run = subprocess.run(
        [str(gwctl), "get", "virtualservice"],
        env=env.gw.env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    rows = {
        cells[0]: cells
        for line in run.stdout.splitlines()
        if line.startswith("|") and (cells := [c.strip() for c in line.strip("|").split("|")])[0]
    }
    assert rows["VIRTUAL SERVICE"][3] == "SSL"
    assert rows["a"][3] == "secret_ref"
    assert rows["plain"][3] == "none"
    served = httpx.get(env.gw.admin_url + "/snapshots/xds", timeout=5).text
    read = httpx.get(env.gw.admin_url + "/snapshots/input", timeout=5).text
    for pair in env.certs.values():
        key_body = pair.key_pem.splitlines()[1]
        for text in (run.stdout, served, read, env.gw.process.output()):
            assert key_body not in text


def _reason_has(env: Env, key: str, text: str) -> dict[str, Any] | None:
    status = env.gw.status(key)
    return status if status is not None and text in status["reason"] else None


def test_lua_transformations_run_on_a_tls_host(tmp_path: Path) -> None:
    """A TLS virtual host's routes carry whole transformation scripts (its own chain holds
    none, unlike a plain listener's filter): a request template that needs the Lua runtime
    writes a header the upstream sees, and a response template reads a request header."""
    echo = Echo(tmp_path, "alpha")
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "upstreams.yaml").write_text(upstream("alpha", echo.port))
    secret = tls_secret_yaml("tls-t", "default", make_cert(["t.test"], CA))
    (folder / "tls-t.yaml").write_text(secret)
    (folder / "t.yaml").write_text(TRANSFORMED_TLS_HOST)
    gw = GwUp(folder, tmp_path / "home")
    try:
        gw.wait_status("VirtualService default.t", "Accepted")
        wait_until(lambda: https_get(gw.https_port, "t.test").status == 200, what="t.test")
        for gold, tier in (("yes", "gold"), ("no", "basic")):
            extra = {"x-gold": gold, "x-ask": f"asked-{tier}"}
            reply = https_get(gw.https_port, "t.test", path="/hello", headers=extra)
            assert reply.status == 200 and reply.headers["x-asked"] == f"asked-{tier}"
            echoed = httpx.Response(200, content=reply.body).json()
            assert echoed["headers"]["x-tier"] == tier
    finally:
        gw.stop()
        echo.stop()


TRANSFORMED_TLS_HOST = """apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: t, namespace: default}
spec:
  sslConfig:
    secretRef: {name: tls-t, namespace: default}
  virtualHost:
    domains: [t.test]
    options:
      transformations:
        requestTransformation:
          transformationTemplate:
            headers:
              x-tier: {text: '{% if header("x-gold") == "yes" %}gold{% else %}basic{% endif %}'}
        responseTransformation:
          transformationTemplate:
            headers:
              x-asked: {text: '{{ request_header("x-ask") }}'}
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: alpha, namespace: gw-system}}}
"""
