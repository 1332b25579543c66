"""Secret values never leave the secrets: not in any process's log, the debug server's
endpoints, the proxy admin's config dump, `gwctl` output or status text.

The test plants real secret values: a TLS server private key, an upstream client
certificate's private key, a TLS secret whose key does not match (so a status talks about
it), an OAuth client secret (from which the extauth server also derives its login-cookie
key), and private / symmetric key material pasted by mistake into `jwks.local.key`. Then it
makes the components use them (TLS handshakes, a protected request reaching the extauth
server), with the control plane logging at debug, and scans everything a user or a support
bundle can see for any part of any of them. Real `gw up`, Envoy, extauth server, `gwctl`.

The console's pages and its explanations of every host that holds or guards a secret are
scanned too.

The AuthConfig kinds add their own: a basic-auth password (only ever in requests), its salt
and APR1 hash (in the AuthConfig, made by `htpasswd`), an API key and a value of its secret
that a header copies (both used by requests that pass), an LDAP user's password (only in
requests, bound at a real `slapd`) and an LDAP service account's (in its Secret).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import ssl
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.certs import KeyPair, make_ca, make_cert, tls_secret_yaml
from tests.support.console_site import explain_page
from tests.support.extauth_manifests import (
    auth_config,
    extauth_backends,
    extauth_settings,
    protected_app,
)
from tests.support.files import save
from tests.support.gwctl import gwctl
from tests.support.htpasswd import apr1
from tests.support.manifests import upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.slapd import READER_DN, USER_DN_TEMPLATE, Slapd, group_dn
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

CA = make_ca("gw secrets CA")
SERVER = make_cert(["tls.test"], CA)
CLIENT = make_cert(["gw-client"], CA)
MISMATCHED = make_cert(["bad.test"], CA)
OTHER = make_cert(["bad.test"], CA)
CLIENT_SECRET = "cs-" + secrets.token_urlsafe(24)
HMAC_KEY = secrets.token_urlsafe(32)
BASIC_PASSWORD = "pw-" + secrets.token_urlsafe(18)
BASIC_SALT, BASIC_HASH = apr1("alice", BASIC_PASSWORD)
API_KEY = "key-" + secrets.token_urlsafe(24)
API_KEY_EMAIL = f"{secrets.token_hex(12)}@example.com"
LDAP_PASSWORD = "ldap-" + secrets.token_urlsafe(18)
LDAP_SERVICE_PASSWORD = "svc-" + secrets.token_urlsafe(18)
_PRIVATE_JWT = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _private_pem() -> str:
    from cryptography.hazmat.primitives import serialization

    return _PRIVATE_JWT.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


JWT_PRIVATE_PEM = _private_pem()


def fragments() -> dict[str, list[str]]:
    """Pieces of every planted secret that must never show: each base64 line of each
    private key, the middle of its base64 form (how Secret manifests hold it), the raw
    values."""
    out: dict[str, list[str]] = {}
    for label, pem in (
        ("server key", SERVER.key_pem),
        ("client key", CLIENT.key_pem),
        ("mismatched key", OTHER.key_pem),
        ("JWT private key", JWT_PRIVATE_PEM),
    ):
        lines = [line for line in pem.splitlines() if line and not line.startswith("-----")]
        encoded = base64.b64encode(pem.encode()).decode()
        out[label] = [line for line in lines if len(line) >= 16] + [encoded[40:80]]
    out["OAuth client secret"] = [CLIENT_SECRET]
    out["symmetric JWK"] = [HMAC_KEY]
    out["basic-auth password"] = [BASIC_PASSWORD]
    out["basic-auth salt and hash"] = [f"{BASIC_SALT}", BASIC_HASH]
    out["API key"] = [API_KEY, base64.b64encode(API_KEY.encode()).decode()]
    out["API key metadata"] = [API_KEY_EMAIL, base64.b64encode(API_KEY_EMAIL.encode()).decode()]
    out["LDAP user password"] = [LDAP_PASSWORD]
    out["LDAP service account password"] = [LDAP_SERVICE_PASSWORD]
    return out


def leaks(text: str) -> list[str]:
    return [label for label, parts in fragments().items() if any(p in text for p in parts)]


def jwt_virtual_service(name: str, key: str) -> str:
    return f"""
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.test]
    options:
      jwt:
        providers:
          p:
            issuer: https://issuer.test
            jwks:
              local:
                key: |
{textwrap.indent(key, " " * 18)}
    routes:
    - matchers: [{{prefix: /}}]
      routeAction: {{single: {{upstream: {{name: app, namespace: gw-system}}}}}}
"""


def key_auth_configs() -> str:
    """A basic-auth AuthConfig and an API-key one (with a secret value copied into a
    header), with the virtual services they guard."""
    return f"""
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: basic, namespace: gw-system}}
spec:
  configs:
  - basicAuth:
      apr: {{users: {{alice: {{salt: "{BASIC_SALT}", hashedPassword: "{BASIC_HASH}"}}}}}}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: keys, namespace: gw-system}}
spec:
  configs:
  - apiKeyAuth:
      headersFromMetadataEntry: {{x-email: {{name: email}}}}
      labelSelector: {{keys: planted}}
---
apiVersion: v1
kind: Secret
metadata: {{name: planted-key, namespace: default, labels: {{keys: planted}}}}
type: extauth.vendor.io/apikey
data:
  api-key: {base64.b64encode(API_KEY.encode()).decode()}
  email: {base64.b64encode(API_KEY_EMAIL.encode()).decode()}
---
{protected_app("basic", "basic.test", "basic")}
---
{protected_app("keys", "keys.test", "keys")}
"""


def ldap_auth_config(slapd: Slapd) -> str:
    """An LDAP AuthConfig reading groups as a service account (its password in a Secret),
    with the virtual service it guards."""
    return f"""
apiVersion: v1
kind: Secret
metadata: {{name: ldap-reader, namespace: gw-system}}
type: extauth.vendor.io/accountcredentials
stringData: {{username: "{READER_DN}", password: "{LDAP_SERVICE_PASSWORD}"}}
---
apiVersion: enterprise.gw.vendor.io/v1
kind: AuthConfig
metadata: {{name: ldap, namespace: gw-system}}
spec:
  configs:
  - ldap:
      address: {slapd.address}
      userDnTemplate: "{USER_DN_TEMPLATE}"
      allowedGroups: ["{group_dn("managers")}"]
      groupLookupSettings:
        checkGroupsWithServiceAccount: true
        credentialsSecretRef: {{name: ldap-reader, namespace: gw-system}}
---
{protected_app("ldap", "ldap.test", "ldap")}
"""


def client_tls_upstream(port: int) -> str:
    return f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: mtls, namespace: default}}
spec:
  static: {{hosts: [{{addr: 127.0.0.1, port: {port}}}]}}
  sslConfig:
    secretRef: {{name: client-tls, namespace: default}}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("secrets")
    started: list[Any] = []
    try:
        app = Echo(work, "app")
        started.append(app)
        slapd = Slapd(work, LDAP_SERVICE_PASSWORD, {"rick": LDAP_PASSWORD})
        started.append(slapd)
        folder = work / "config"
        folder.mkdir()
        extauth_port = free_port()
        symmetric = json.dumps({"kty": "oct", "k": HMAC_KEY, "alg": "HS256"})
        save(
            folder / "all.yaml",
            "\n---\n".join(
                [
                    extauth_settings("1s"),
                    extauth_backends(extauth_port, app.port, CLIENT_SECRET),
                    auth_config("login", "http://app.test", f"http://127.0.0.1:{free_port()}"),
                    protected_app("app", "app.test", "login"),
                    tls_secret_yaml("server-tls", "default", SERVER),
                    upstream("plain", app.port)
                    + "\n---\n"
                    + virtual_service("tls", "tls.test", "plain")
                    + "  sslConfig: {secretRef: {name: server-tls, namespace: default}}\n",
                    _mismatched_secret(),
                    virtual_service("bad", "bad.test", "plain")
                    + "  sslConfig: {secretRef: {name: bad-tls, namespace: default}}\n",
                    tls_secret_yaml("client-tls", "default", CLIENT, CA),
                    client_tls_upstream(app.port),
                    virtual_service("mtls", "mtls.test", "mtls"),
                    jwt_virtual_service("jwt-private", JWT_PRIVATE_PEM),
                    jwt_virtual_service("jwt-symmetric", symmetric),
                    key_auth_configs(),
                    ldap_auth_config(slapd),
                ]
            ),
        )
        # The keyword (not a bare --extauth-port) also gives the HTTP checks a port, so that
        # the basic-auth and API-key checks this test plants secrets for run over HTTP too.
        gw = GwUp(folder, work / "home", "--log-level", "debug", extauth_port=extauth_port)
        started.append(gw)
        gw.wait_status("VirtualService default.tls", "Accepted")
        gw.wait_status("VirtualService default.bad", "Rejected")
        gw.wait_status("VirtualService default.jwt-private", "Rejected")
        yield {"gw": gw, "folder": folder, "work": work}
    finally:
        for process in reversed(started):
            process.stop()


def _mismatched_secret() -> str:
    """A TLS secret holding the certificate of one key and another key."""
    pair = KeyPair(MISMATCHED.cert_pem, OTHER.key_pem, MISMATCHED.cert, OTHER.key)
    return tls_secret_yaml("bad-tls", "default", pair)


def use_the_secrets(gw: GwUp) -> None:
    """Handshakes with the server key; a request through the upstream's client key; a
    protected request reaching the extauth server (which loads the client secret)."""
    context = ssl.create_default_context(cadata=CA.cert_pem)
    with httpx.Client(verify=context) as client:
        response = client.get(
            gw.https_url + "/",
            headers={"host": "tls.test"},
            extensions={"sni_hostname": "tls.test"},
        )
        assert response.headers["x-echo-name"] == "app"
    # The echo speaks plain HTTP: the TLS hop fails, but Envoy loaded the client key to try.
    assert gw.get("/", host="mtls.test").status_code == 503
    wait_until(
        lambda: gw.get("/private", host="app.test").text == "identity provider unavailable",
        what="the extauth server to answer",
    )
    basic = "Basic " + base64.b64encode(f"alice:{BASIC_PASSWORD}".encode()).decode()
    wait_until(
        lambda: gw.get("/", host="basic.test", headers={"authorization": basic}).status_code == 200,
        what="the basic-auth login to pass",
    )
    wrong = "Basic " + base64.b64encode(f"alice:{BASIC_PASSWORD}x".encode()).decode()
    assert gw.get("/", host="basic.test", headers={"authorization": wrong}).status_code == 401
    seen = gw.get("/", host="keys.test", headers={"api-key": API_KEY}).json()["headers"]
    assert seen["x-email"] == API_KEY_EMAIL
    assert gw.get("/", host="keys.test", headers={"api-key": API_KEY + "x"}).status_code == 401
    ldap = "Basic " + base64.b64encode(f"rick:{LDAP_PASSWORD}".encode()).decode()
    seen = gw.get("/", host="ldap.test", headers={"authorization": ldap}).json()["headers"]
    assert seen["x-user-id"] == "rick"
    wrong = "Basic " + base64.b64encode(f"rick:{LDAP_PASSWORD}x".encode()).decode()
    assert gw.get("/", host="ldap.test", headers={"authorization": wrong}).status_code == 401


def test_no_secret_value_shows_anywhere(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    use_the_secrets(gw)
    shown: dict[str, str] = {}

    # Statuses name the problem without quoting the material.
    statuses = gw.statuses()
    assert "private" in statuses["VirtualService default.jwt-private"]["reason"]
    assert statuses["VirtualService default.jwt-symmetric"]["state"] == "Rejected"
    assert "does not match" in statuses["VirtualService default.bad"]["reason"]

    # The debug server: every endpoint its index lists.
    index = httpx.get(gw.admin_url + "/", timeout=5).text
    paths = sorted(set(re.findall(r'href="(/[^"?#]*)', index)))
    assert {"/statuses", "/snapshots/input", "/snapshots/xds", "/snapshots/proxies"} <= set(paths)
    for path in paths:
        if "profil" in path or "pprof" in path:
            continue  # CPU profiles sample for seconds and hold no configuration
        shown[f"debug {path}"] = httpx.get(gw.admin_url + path, timeout=10).text
    served = httpx.get(gw.admin_url + "/snapshots/xds", timeout=5).json()["data"]
    assert "<redacted>" in json.dumps(served)  # the secrets are there, shown redacted

    # The console: every page, and explain on every host that holds or guards a secret.
    for page in ("", "routes", "explain", "traffic", "proxies"):
        shown[f"console /{page}"] = httpx.get(f"{gw.admin_url}/console/{page}", timeout=10).text
    for url in (
        "http://app.test/private",
        "http://basic.test/",
        "http://keys.test/",
        "https://tls.test/",
        "http://mtls.test/",
        "http://bad.test/",
        "http://jwt-private.test/",
        "http://jwt-symmetric.test/",
    ):
        answer = explain_page(gw.admin_url, url=url)
        assert 'id="outcome"' in answer, url
        shown[f"console explain {url}"] = answer

    # The proxy admin (SPEC: /config_dump, with endpoints).
    shown["proxy /config_dump"] = httpx.post(
        gw.proxy_admin_url + "/config_dump?include_eds", timeout=10
    ).text

    # gwctl: everything a user runs, and the support bundle.
    home = gw.home
    for args in (
        ("get", "virtualservice", "-o", "yaml"),
        ("get", "upstreams", "-o", "yaml"),
        ("get", "authconfig", "-o", "yaml"),
        ("get", "secret", "-o", "yaml"),
        ("get", "virtualservice"),
        ("check",),
        ("debug", "yaml"),
        ("debug", "logs"),
        ("proxy", "served-config"),
        ("proxy", "dump"),
        ("validate", "-f", str(env["folder"])),
        ("translate", "-f", str(env["folder"])),
    ):
        run = gwctl(home, *args)
        assert run.stdout, (args, run.stderr)
        shown["gwctl " + " ".join(args[:2])] = run.stdout + run.stderr

    # Every log: gw up's output, the control plane's log file, Envoy's log.
    shown["gw up output"] = gw.process.output()
    for log in sorted((gw.state_dir / "logs").glob("*.log")):
        shown[f"log {log.name}"] = log.read_text(errors="replace")
    assert "debug" in shown["log gw.log"].lower()  # the control plane did log at debug

    found = {where: labels for where, text in shown.items() if (labels := leaks(text))}
    assert found == {}


def test_the_scan_finds_every_planted_value_where_it_belongs(env: dict[str, Any]) -> None:
    """The scan can fail: run on the manifests, which do hold the values, it finds each
    (but the basic-auth and LDAP user passwords, which only requests carry: the manifests
    hold the basic-auth hash, the LDAP server the other),
    and it finds the API key metadata in what the upstream was sent."""
    folder: Path = env["folder"]
    only_in_requests = ("basic-auth password", "LDAP user password")
    in_manifests = [label for label in fragments() if label not in only_in_requests]
    assert leaks((folder / "all.yaml").read_text()) == in_manifests
    echoed = env["gw"].get("/", host="keys.test", headers={"api-key": API_KEY}).text
    assert leaks(echoed) == ["API key", "API key metadata"]
