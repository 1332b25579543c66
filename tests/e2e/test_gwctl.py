"""Every gwctl command, run as a subprocess against a real `gw up` (control plane + Envoy),
its output parsed back: tables, YAML, JSON, stderr and exit status.

One `gw up` serves the whole module; tests that break the configuration put it back before
they end, so the order of the tests does not matter.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from gw import __version__
from tests.support.certs import KeyPair, make_cert, tls_secret_yaml
from tests.support.gwctl import gwctl, ok, parse_table
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp, Process, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

OAUTH_VALUE = "sup3r-s3cret-client-value"

ESTABLISHED_CHECKS = [
    "Deployments",
    "Pods",
    "Tasks",
    "Manifests",
    "Upstreams",
    "UpstreamGroups",
    "AuthConfigs",
    "RateLimitConfigs",
    "VirtualHostOptions",
    "RouteOptions",
    "Secrets",
    "VirtualServices",
    "Gateways",
    "Proxies",
]


def config(echo_port: int) -> dict[str, str]:
    return {
        "upstreams.yaml": f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: echo, namespace: gw-system}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {echo_port}}}]
""",
        "shop.yaml": """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gw-system}}}
""",
        "oauth.yaml": f"""
apiVersion: v1
kind: Secret
metadata: {{name: oauth-client, namespace: gw-system}}
type: extauth.vendor.io/oauth
stringData: {{client-secret: {OAUTH_VALUE}}}
""",
    }


BROKEN = {
    "broken-upstream.yaml": """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: broken, namespace: gw-system}
spec:
  static:
    hosts: []
""",
    "dangling.yaml": """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: dangling, namespace: default}
spec:
  virtualHost:
    domains: [dangling.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: gone, namespace: gw-system}}}
""",
    "junk-secret.yaml": """
apiVersion: v1
kind: Secret
metadata: {name: junk, namespace: gw-system}
type: kubernetes.io/tls
data: {tls.crt: "not base64!"}
""",
    "unreadable.yaml": "kind: [oops\n",
}

SECURE = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: secure, namespace: default}
spec:
  sslConfig:
    secretRef: {name: secure-tls, namespace: default}
  virtualHost:
    domains: [secure.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gw-system}}}
"""


@dataclass
class Setup:
    gw: GwUp
    folder: Path
    echo: Echo
    root: Path

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        result = gwctl(self.gw.home, *args, input=input)
        assert OAUTH_VALUE not in result.stdout + result.stderr, "a secret value was printed"
        return result


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("gwctl")
    echo = Echo(root, "echo")
    try:
        folder = root / "config"
        folder.mkdir()
        for name, text in config(echo.port).items():
            (folder / name).write_text(text)
        gw = GwUp(folder, root / "home")
        try:
            yield Setup(gw, folder, echo, root)
        finally:
            gw.stop()
    finally:
        echo.stop()


def check_lines(stdout: str) -> dict[str, str]:
    found = {}
    for line in stdout.splitlines():
        match = re.fullmatch(r"Checking (\w+)\.\.\. (OK|\d+ Errors!)", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


# --- version ------------------------------------------------------------------------------


def test_version_matches_the_server(setup: Setup) -> None:
    result = setup.run("version")
    assert ok(result).splitlines() == [
        f"Client version: {__version__}",
        f"Server version: {__version__}",
    ]
    assert result.stderr == ""
    data = json.loads(ok(setup.run("version", "-o", "json")))
    assert data == {"client": {"version": __version__}, "server": {"version": __version__}}


def test_version_mismatch_warns_loudly_on_stderr(tmp_path: Path) -> None:
    """A real control plane (`gw controlplane`, no proxy needed) of another version: gwctl
    warns on stderr before any command, and stdout stays clean. The server's version is
    changed in its own process before gw loads (the product has no switch for it)."""
    folder = tmp_path / "config"
    folder.mkdir()
    debug_port = free_port()
    env = gw_env(tmp_path / "home") | {"START_STATS_SERVER": "true"}
    as_version = "import gw; gw.__version__ = '9.9.9'; from gw.cli.gw import main; main()"
    process = Process(
        [
            sys.executable,
            "-c",
            as_version,
            "controlplane",
            "--dir",
            str(folder),
            "--bind",
            "127.0.0.1",
            "--xds-port",
            str(free_port()),
            "--debug-port",
            str(debug_port),
            "--dev-port",
            str(free_port()),
        ],
        env,
        tmp_path / "controlplane.log",
    )
    admin = f"http://127.0.0.1:{debug_port}"
    try:
        wait_until(lambda: httpx.get(admin + "/version", timeout=1).status_code == 200)
        result = gwctl(tmp_path / "home", "version", "--admin-url", admin)
        assert ok(result).splitlines() == [
            f"Client version: {__version__}",
            "Server version: 9.9.9",
        ]
        assert result.stderr.splitlines() == [
            "----------",
            f"gwctl binary version ({__version__}) differs from server components (9.9.9).",
            "gwctl must match the installed version; consider installing gwctl 9.9.9.",
            "----------",
        ]
        listed = gwctl(tmp_path / "home", "get", "upstreams", "--admin-url", admin)
        assert parse_table(ok(listed)) == []
        assert "differs from server components (9.9.9)" in listed.stderr
    finally:
        process.stop()


def test_shell_completion_script() -> None:
    # Typer detects the user's shell from the parent processes unless told to take the one
    # named on the command line; a test run's parents need not include a shell it knows.
    env = dict(gw_env(Path("/nonexistent")), _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    result = subprocess.run(
        [sys.executable, "-m", "gw.cli.gwctl", "--show-completion", "bash"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "_GWCTL_COMPLETE=complete_bash" in result.stdout
    assert "complete " in result.stdout


# --- check --------------------------------------------------------------------------------


def test_check_healthy(setup: Setup) -> None:
    result = setup.run("check")
    lines = ok(result).splitlines()
    assert lines[-1] == "No problems detected."
    assert check_lines(result.stdout) == dict.fromkeys(ESTABLISHED_CHECKS, "OK")
    assert len(lines) == len(ESTABLISHED_CHECKS) + 1
    assert result.stderr == ""
    data = json.loads(ok(setup.run("check", "-o", "json")))
    assert data["resources"] == [{"name": c, "status": "OK"} for c in ESTABLISHED_CHECKS]
    assert data["messages"] == ["No problems detected."]
    assert data["errors"] == []


def test_check_reports_each_problem_and_fails(setup: Setup) -> None:
    for name, text in BROKEN.items():
        (setup.folder / name).write_text(text)
    try:
        setup.gw.wait_status("Upstream gw-system.broken", "Rejected")
        setup.gw.wait_status("VirtualService default.dangling", "Warning")
        result = setup.run("check")
        assert result.returncode == 1
        assert "No problems detected." not in result.stdout
        lines = check_lines(result.stdout)
        assert lines["Manifests"] == lines["Upstreams"] == lines["Secrets"] == "1 Errors!"
        assert lines["VirtualServices"] == "2 Errors!"
        assert lines["Proxies"] == lines["Deployments"] == lines["Pods"] == lines["Tasks"] == "OK"
        stderr = result.stderr.rstrip("\n").splitlines()
        assert stderr[0] == "Error: 5 errors occurred:"
        assert all(line.startswith("\t* ") for line in stderr[1:])
        assert [line.removeprefix("\t* ") for line in stderr[1:]] == [
            "Found manifest that cannot be read: unreadable.yaml: invalid YAML at line 2, "
            "column 1: did not find expected ',' or ']'",
            "Found rejected upstream by 'gw-system': gw-system broken "
            "(Reason: spec.static.hosts: a static upstream needs at least one host)",
            "Found unreadable secret: gw-system junk (Reason: data: data.tls.crt is not "
            "valid base64)",
            "Found virtual service with warnings by 'gw-system': default dangling (Reason: "
            "spec.virtualHost.routes[0].routeAction.single.upstream: Route Warning: "
            "InvalidDestinationWarning. Reason: *v1.Upstream { gw-system.gone } not found)",
            "Virtual service references unknown upstream: (Virtual service: default dangling "
            "| Upstream: gw-system gone)",
        ]
        excluded = setup.run("check", "-x", "upstreams,secrets", "-x", "manifests")
        assert "Upstreams" not in check_lines(excluded.stdout)
        assert excluded.stderr.splitlines()[0] == "Error: 2 errors occurred:"
        data = json.loads(setup.run("check", "-o", "json").stdout)
        assert {"name": "Upstreams", "status": "1 Errors!"} in data["resources"]
        assert data["messages"] == [] and len(data["errors"]) == 5
    finally:
        for name in BROKEN:
            (setup.folder / name).unlink()
        wait_until(lambda: setup.gw.status("Upstream gw-system.broken") is None)
    assert ok(setup.run("check")).endswith("No problems detected.\n")


def test_check_reports_missing_and_refused_secrets(setup: Setup) -> None:
    secure = setup.folder / "secure.yaml"
    pair, other = make_cert(["mismatch.example.com"]), make_cert(["other.example.com"])
    mismatched = tls_secret_yaml("mismatch-tls", "default", KeyPair(
        cert_pem=pair.cert_pem, key_pem=other.key_pem, cert=pair.cert, key=other.key
    ))  # fmt: skip
    uses_it = SECURE.replace("secure", "mismatch")
    secure.write_text(SECURE + "---\n" + mismatched + "---\n" + uses_it)
    try:
        setup.gw.wait_status("VirtualService default.secure", "Rejected")
        setup.gw.wait_status("VirtualService default.mismatch", "Rejected")
        result = setup.run("check")
        assert result.returncode == 1
        assert check_lines(result.stdout)["Secrets"] == "2 Errors!"
        problems = [line.removeprefix("\t* ") for line in result.stderr.splitlines()[1:]]
        secrets = [p for p in problems if "secret: default" in p]
        assert secrets == [
            "Found invalid secret: default mismatch-tls (referenced by virtual service default "
            "mismatch: default.mismatch-tls is not a valid TLS secret: the private key does not "
            "match the certificate)",
            "Found missing secret: default secure-tls (referenced by virtual service default "
            "secure at spec.sslConfig.secretRef)",
        ]
    finally:
        secure.unlink()
        wait_until(lambda: setup.gw.status("VirtualService default.secure") is None)


# --- get ----------------------------------------------------------------------------------


def test_get_upstreams_and_virtualservices(setup: Setup) -> None:
    rows = parse_table(ok(setup.run("get", "upstreams")))
    assert rows == [
        {
            "UPSTREAM": "echo",
            "TYPE": "Static",
            "STATUS": "Accepted",
            "DETAILS": f"hosts:\n- 127.0.0.1:{setup.echo.port}",
        }
    ]
    rows = parse_table(ok(setup.run("get", "virtualservice", "shop")))
    assert rows == [
        {
            "VIRTUAL SERVICE": "shop",
            "DISPLAY NAME": "",
            "DOMAINS": "shop.example.com",
            "SSL": "none",
            "STATUS": "Accepted",
            "LISTENERPLUGINS": "",
            "ROUTES": "/ -> gw-system.echo (upstream)",
        }
    ]
    listed = json.loads(ok(setup.run("get", "upstreams", "echo", "-o", "json")))
    assert [u["status"]["statuses"]["gw-system"]["state"] for u in listed] == ["Accepted"]
    documents = list(yaml.safe_load_all(ok(setup.run("get", "vs", "-o", "yaml"))))
    assert [d["metadata"]["name"] for d in documents] == ["shop"]
    missing = setup.run("get", "virtualservice", "nope")
    assert missing.returncode == 1
    assert missing.stderr == "Error: VirtualService 'nope' not found\n"


# --- proxy --------------------------------------------------------------------------------


def test_proxy_url_and_address(setup: Setup) -> None:
    assert ok(setup.run("proxy", "url")) == setup.gw.url + "\n"
    assert ok(setup.run("proxy", "url", "--port", "https")) == setup.gw.https_url + "\n"
    assert ok(setup.run("proxy", "address")) == f"127.0.0.1:{setup.gw.http_port}\n"
    bad_port = setup.run("proxy", "url", "--port", "grpc")
    assert bad_port.returncode == 1
    assert bad_port.stderr.startswith("Error: named port grpc not found on service gateway-proxy")
    other = setup.run("proxy", "address", "--name", "other-proxy")
    assert other.returncode == 1
    assert "could not detect 'other-proxy' service in gw-system namespace" in other.stderr


def served_sections(text: str) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    for chunk in text.strip().split("\n\n#"):
        header, _, body = chunk.lstrip("#").partition("\n")
        if header.startswith("role: "):
            sections["role"] = header.removeprefix("role: ")
        else:
            sections[header] = yaml.safe_load(body)
    return sections


def test_served_config_is_what_the_proxy_gets(setup: Setup) -> None:
    sections = served_sections(ok(setup.run("proxy", "served-config")))
    assert sections["role"] == "gw-system~gateway-proxy"
    assert [c["name"] for c in sections["clusters"]] == ["echo_gw-system"]
    assert sections["eds"] == []
    (listener,) = sections["listeners"]
    assert listener["address"]["socket_address"]["port_value"] == setup.gw.http_port
    (routes,) = sections["rds"]
    domains = [d for vh in routes["virtual_hosts"] for d in vh["domains"]]
    assert "shop.example.com" in domains
    assert sections["secrets"] == []
    data = json.loads(ok(setup.run("proxy", "served-config", "-o", "json")))
    assert data["listeners"] == sections["listeners"]
    # It is exactly what the control plane's admin API says it serves.
    served = setup.gw.admin("/snapshots/xds")["gw-system~gateway-proxy"]
    assert data["clusters"] == served["clusters"]
    assert data["rds"] == served["routes"]


def test_proxy_dump_is_envoys_config(setup: Setup) -> None:
    dump = json.loads(ok(setup.run("proxy", "dump")))
    types = [c["@type"].rsplit(".", 1)[-1] for c in dump["configs"]]
    assert "ListenersConfigDump" in types and "EndpointsConfigDump" not in types
    with_eds = json.loads(ok(setup.run("proxy", "dump", "--include-eds")))
    types = [c["@type"].rsplit(".", 1)[-1] for c in with_eds["configs"]]
    assert "EndpointsConfigDump" in types
    listeners = next(c for c in dump["configs"] if c["@type"].endswith("ListenersConfigDump"))
    names = [d["active_state"]["listener"]["name"] for d in listeners["dynamic_listeners"]]
    assert names == [f"listener-127.0.0.1-{setup.gw.http_port}"]


def stats(setup: Setup) -> dict[str, str]:
    text = ok(setup.run("proxy", "stats", "-n", "gw-system", "--name", "gateway-proxy"))
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def test_proxy_stats_count_requests(setup: Setup) -> None:
    counter = "cluster.echo_gw-system.upstream_rq_total"
    before = int(stats(setup)[counter])
    for _ in range(3):
        assert setup.gw.get("/", host="shop.example.com").status_code == 200
    assert int(stats(setup)[counter]) == before + 3


def test_proxy_logs_sets_debug_and_follows(setup: Setup) -> None:
    admin = setup.gw.proxy_admin_url
    try:
        once = setup.run("proxy", "logs", "--name", "gateway-proxy")
        assert once.returncode == 0, once.stderr
        assert "proxy gw-system.gateway-proxy: log level set to debug" in once.stderr
        loggers = httpx.get(admin + "/logging", timeout=5).text
        assert "  router: debug" in loggers.splitlines()
        follow = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gw.cli.gwctl",
                "proxy",
                "logs",
                "--name",
                "gateway-proxy",
                "-f",
            ],
            env=gw_env(setup.gw.home),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert follow.stdout is not None
        reader = threading.Thread(target=lambda: [lines.put(x) for x in follow.stdout], daemon=True)
        reader.start()
        try:
            marker = "/gwctl-follow-marker"
            setup.gw.get(marker, host="shop.example.com")

            def seen() -> bool:
                while not lines.empty():
                    if marker in lines.get_nowait():
                        return True
                return False

            wait_until(seen, what="the followed log to show the request")
        finally:
            os.killpg(follow.pid, signal.SIGINT)
            assert follow.wait(10) == 0
            reader.join(5)
            follow.stdout.close()
    finally:
        httpx.post(admin + "/logging?level=info", timeout=5)


# --- debug --------------------------------------------------------------------------------


def test_debug_logs_collects_every_component(setup: Setup, tmp_path: Path) -> None:
    # An error record in the proxy's log: Envoy refuses a level change over GET.
    assert httpx.get(setup.gw.proxy_admin_url + "/logging?level=debug").status_code == 405
    everything = ok(setup.run("debug", "logs"))
    assert "==> gateway-proxy <==" in everything and "==> gw <==" in everything
    assert "translated 3 resources" in everything
    errors = ok(setup.run("debug", "logs", "--errors-only"))
    records = [
        line for line in errors.splitlines() if re.match(r"^\[\d{4}-|^\d{4}-\d\d-\d\d ", line)
    ]
    assert any("mutates state, method=GET rather than POST" in r for r in records)
    assert all(re.search(r"\]\[(error|critical)\]\[| (ERROR|CRITICAL) ", r) for r in records)
    assert "translated 3 resources" not in errors
    out = tmp_path / "logs.txt"
    written = setup.run("debug", "logs", "-f", str(out))
    assert ok(written) == "" and "logs of 2 components written to" in written.stderr
    assert "==> gateway-proxy <==" in out.read_text()


def test_debug_yaml_dumps_everything_without_secret_values(setup: Setup, tmp_path: Path) -> None:
    text = ok(setup.run("debug", "yaml"))
    header, _, body = text.partition("\n---\n")
    assert header.startswith("# gw debug dump")
    assert f"#   folder: {setup.folder.resolve()}" in header.splitlines()
    documents = list(yaml.safe_load_all(body))
    kinds = sorted(d["kind"] for d in documents)
    assert kinds == ["Proxy", "Secret", "Upstream", "VirtualService"]
    secret = next(d for d in documents if d["kind"] == "Secret")
    assert secret["stringData"] == {"client-secret": "<redacted>"}
    upstream = next(d for d in documents if d["kind"] == "Upstream")
    assert upstream["status"]["statuses"]["gw-system"]["state"] == "Accepted"
    out = tmp_path / "dump.yaml"
    assert ok(setup.run("debug", "yaml", "-f", str(out))) == ""
    assert OAUTH_VALUE not in out.read_text() and "kind: Proxy" in out.read_text()


# --- create -------------------------------------------------------------------------------


def test_create_secrets_and_upstream(setup: Setup, tmp_path: Path) -> None:
    created = setup.folder / "gwctl-created"
    try:
        value = "another-client-s3cret"
        result = setup.run(
            "create", "secret", "oauth", "--namespace", "gw-system", "--name", "made",
            "--client-secret", value,
        )  # fmt: skip
        assert parse_table(ok(result)) == [{"SECRET": "made", "TYPE": "OAuth"}]
        assert value not in result.stdout + result.stderr
        path = created / "secret-gw-system-made.yaml"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        manifest = yaml.safe_load(path.read_text())
        assert manifest["type"] == "extauth.vendor.io/oauth"
        assert base64.b64decode(manifest["data"]["client-secret"]).decode() == value
        wait_until(lambda: "made" in json.dumps(setup.gw.admin("/statuses")["inputs"]))
        again = setup.run("create", "secret", "oauth", "--name", "made", "--client-secret", "x")
        assert again.returncode == 1
        assert again.stderr.startswith("Error: Secret gw-system.made already exists (in ")

        pair, other = make_cert(["shop.example.com"]), make_cert(["other.example.com"])
        (tmp_path / "cert.pem").write_text(pair.cert_pem)
        (tmp_path / "key.pem").write_text(pair.key_pem)
        (tmp_path / "other.pem").write_text(other.key_pem)
        tls = ["create", "secret", "tls", "--namespace", "default", "--name", "shop-tls"]
        mismatch = setup.run(
            *tls, "--certfile", str(tmp_path / "cert.pem"), "--keyfile", str(tmp_path / "other.pem")
        )
        assert mismatch.returncode == 1
        assert "the private key does not match the certificate" in mismatch.stderr
        dry = setup.run(
            *tls, "--certfile", str(tmp_path / "cert.pem"), "--keyfile", str(tmp_path / "key.pem"),
            "--dry-run",
        )  # fmt: skip
        assert yaml.safe_load(ok(dry))["data"] == {"tls.crt": "<redacted>", "tls.key": "<redacted>"}
        assert pair.key_pem.splitlines()[1] not in dry.stdout
        made = setup.run(
            *tls, "--certfile", str(tmp_path / "cert.pem"), "--keyfile", str(tmp_path / "key.pem")
        )
        assert parse_table(ok(made)) == [{"SECRET": "shop-tls", "TYPE": "TLS"}]
        assert pair.key_pem.splitlines()[1] not in made.stdout + made.stderr

        orch = [
            "create", "upstream", "orch", "--orch-service", "petstore",
            "--orch-service-namespace", "default", "--orch-service-port", "8080",
            "-n", "gw-system", "default-petstore-8080",
        ]  # fmt: skip
        dry_upstream = yaml.safe_load(ok(setup.run(*orch, "--dry-run")))
        assert dry_upstream["spec"] == {
            "orch": {"serviceName": "petstore", "serviceNamespace": "default", "servicePort": 8080}
        }
        assert not (created / "upstream-gw-system-default-petstore-8080.yaml").exists()
        (row,) = parse_table(ok(setup.run(*orch)))
        assert row["UPSTREAM"] == "default-petstore-8080" and row["TYPE"] == "Orch"
        assert row["DETAILS"] == (
            "svc name:      petstore\nsvc namespace: default\nport:          8080"
        )
        # The control plane picked the new file up: the row shows its status, not Pending.
        assert row["STATUS"].splitlines()[0] in ("Accepted", "Warning", "Rejected")
        written = yaml.safe_load(
            (created / "upstream-gw-system-default-petstore-8080.yaml").read_text()
        )
        assert written == {**dry_upstream}
    finally:
        shutil.rmtree(created, ignore_errors=True)
        wait_until(lambda: setup.gw.status("Upstream gw-system.default-petstore-8080") is None)


# --- validate / translate (offline) -------------------------------------------------------


def write_folder(path: Path, files: dict[str, str]) -> Path:
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def test_validate_good_and_bad_folders(tmp_path: Path) -> None:
    home = tmp_path / "no-install"
    good = write_folder(tmp_path / "good", config(9000))
    result = gwctl(home, "validate", "-f", str(good))
    rows = parse_table(ok(result))
    assert [(r["KIND"], r["NAME"], r["STATUS"]) for r in rows] == [
        ("Upstream", "echo", "Accepted"),
        ("VirtualService", "shop", "Accepted"),
    ]
    assert result.stdout.splitlines()[-1] == "2 resources valid (0 with warnings)"
    single = gwctl(home, "validate", "-f", str(good / "shop.yaml"), "-o", "json")
    data = json.loads(ok(single))
    assert [(s["name"], s["state"]) for s in data["statuses"]] == [("shop", "Warning")]
    assert gwctl(home, "validate", "-f", str(good / "shop.yaml"), "--strict").returncode == 1

    bad = write_folder(tmp_path / "bad", {**config(9000), **BROKEN})
    failed = gwctl(home, "validate", "-f", str(bad))
    assert failed.returncode == 1
    assert failed.stderr == "Error: validation failed: 1 rejected, 1 unreadable manifests\n"
    rows = {(r["KIND"], r["NAME"]): r["STATUS"] for r in parse_table(failed.stdout)}
    assert rows[("Upstream", "broken")] == (
        "Rejected\nspec.static.hosts: a static upstream needs at least one host"
    )
    assert rows[("(file)", "unreadable.yaml")].startswith("Unreadable\ninvalid YAML at line 2")


#: The clusters of the Upstreams `gw up` declares for its extauth and rate-limit servers.
UP_CLUSTERS = ["extauth_gw-system", "rate-limit_gw-system"]


def test_translate_prints_what_the_files_produce(tmp_path: Path) -> None:
    home = tmp_path / "no-install"
    good = write_folder(tmp_path / "good", config(9000))
    data = json.loads(
        ok(gwctl(home, "translate", "-f", str(good), "--to", "reports,proxy,xds", "-o", "json"))
    )
    assert sorted(data) == ["proxy", "reports", "xds"]
    # As gw up translates: with the Upstreams it declares for its own servers.
    assert [c["name"] for c in data["xds"]["clusters"]] == ["echo_gw-system", *UP_CLUSTERS]
    assert data["proxy"]["name"] == "gateway-proxy"
    assert {s["name"]: s["state"] for s in data["reports"]["statuses"]} == {
        "echo": "Accepted",
        "shop": "Accepted",
    }
    default = yaml.safe_load(ok(gwctl(home, "translate", "-f", str(good))))
    assert sorted(default) == ["reports", "xds"]
    bad = write_folder(
        tmp_path / "bad", {**config(9000), "broken.yaml": BROKEN["broken-upstream.yaml"]}
    )
    failed = gwctl(home, "translate", "-f", str(bad), "--to", "xds")
    assert failed.returncode == 1
    assert [c["name"] for c in yaml.safe_load(failed.stdout)["xds"]["clusters"]] == [
        "echo_gw-system",
        *UP_CLUSTERS,
    ]
    wrong = gwctl(home, "translate", "-f", str(good), "--to", "ir")
    assert wrong.returncode == 1 and "--to takes reports, proxy, xds, not ir" in wrong.stderr
