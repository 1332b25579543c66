"""The control-plane debug server (9091), dev mode (10010) and the proxy administration
interface (19000), against a real `gw up` and a real `gw controlplane`.

Ports are free loopback ports passed as flags; the well-known numbers are only defaults.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp, Process, gw_command, gw_env
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

ROLE = "gw-system~gateway-proxy"


@dataclass
class Setup:
    gw: GwUp
    folder: Path
    dev_port: int

    @property
    def log(self) -> Path:
        return self.gw.state_dir / "logs" / "gw.log"

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.gw.admin_url + path, timeout=30, **kwargs)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("debug")
    echo = Echo(root, "echo")
    try:
        folder = root / "config"
        folder.mkdir()
        (folder / "upstream.yaml").write_text(
            f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: echo, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {echo.port}}}]}}}}
"""
        )
        (folder / "vs.yaml").write_text(
            """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: shop, namespace: default}
spec:
  virtualHost:
    domains: ["*"]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gw-system}}}
"""
        )
        dev_port = free_port()
        gw = GwUp(folder, root / "home", "--dev-port", str(dev_port))
        try:
            yield Setup(gw, folder, dev_port)
        finally:
            gw.stop()
    finally:
        echo.stop()


def envelope(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert set(body) <= {"status", "data", "error"} and {"status", "data"} <= set(body)
    return body


# --- the debug server ---------------------------------------------------------------------


def test_index_lists_the_endpoints(setup: Setup) -> None:
    response = setup.call("GET", "/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    for path in (
        "/logging",
        "/metrics",
        "/debug/traces",
        "/debug/pprof/profile?seconds=5",
        "/debug/pprof/tasks",
        "/debug/pprof/heap",
        "/statuses",
        "/snapshots/input",
        "/snapshots/xds",
    ):
        assert f'href="{path}"' in response.text
        target = path.replace("seconds=5", "seconds=0.1")
        assert setup.call("GET", target).status_code == 200, target


def test_every_answer_is_an_envelope(setup: Setup) -> None:
    for path in ("/statuses", "/snapshots/input", "/proxies", "/version", "/logging"):
        body = envelope(setup.call("GET", path))
        assert body["status"] == "ok" and "error" not in body
    missing = setup.call("GET", "/no/such/endpoint")
    assert missing.status_code == 404
    assert envelope(missing) == {"status": "error", "data": None, "error": "Not Found"}
    wrong_method = setup.call("POST", "/logging")
    assert wrong_method.status_code == 405
    assert envelope(wrong_method)["error"] == "Method Not Allowed"


def test_log_level_change_takes_effect(setup: Setup) -> None:
    assert envelope(setup.call("GET", "/logging")) == {"status": "ok", "data": {"level": "info"}}
    try:
        # At info, admin requests are not logged...
        setup.call("GET", "/snapshots/proxies")
        changed = setup.call(
            "PUT", "/logging", json={"level": "debug"}, headers={"content-type": "application/json"}
        )
        assert envelope(changed) == {"status": "ok", "data": {"level": "debug"}}
        assert envelope(setup.call("GET", "/logging"))["data"] == {"level": "debug"}
        # ...at debug they are.
        setup.call("GET", "/snapshots/xds")
        wait_until(
            lambda: (
                "DEBUG gw.admin.server: admin: GET /snapshots/xds -> 200" in setup.log.read_text()
            ),
            what="the debug line in gw.log",
        )
        text = setup.log.read_text()
        assert "admin: GET /snapshots/proxies" not in text
        assert "WARNING gw.admin.debug: log level set to debug through the debug server" in text
    finally:
        setup.call("PUT", "/logging", json={"level": "info"})
    marker_before = setup.log.read_text().count("admin: GET /version")
    setup.call("GET", "/version")
    setup.call("PUT", "/logging", json={"level": "debug"})
    setup.call("PUT", "/logging", json={"level": "info"})
    assert setup.log.read_text().count("admin: GET /version") == marker_before


def test_log_level_errors(setup: Setup) -> None:
    for body, error in [
        (b'{"level": "verbose"}', "unknown log level 'verbose'"),
        (b'{"lvl": "debug"}', 'the body must be a JSON object with a string member "level"'),
        (b"not json", "the body is not valid JSON"),
        (b'["debug"]', "the body must be a JSON object"),
    ]:
        response = setup.call("PUT", "/logging", content=body)
        assert response.status_code == 400
        answer = envelope(response)
        assert answer["status"] == "error" and answer["error"].startswith(error)
    assert envelope(setup.call("GET", "/logging"))["data"] == {"level": "info"}


def metrics(setup: Setup) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = setup.call("GET", "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def test_metrics(setup: Setup) -> None:
    found = metrics(setup)
    assert found[("gw_translations_total", ())] >= 1
    assert found[("gw_translation_failures_total", ())] == 0
    assert found[("gw_translation_duration_seconds_count", ())] >= 1
    assert found[("gw_xds_connected_proxies", (("role", ROLE),))] == 1
    assert found[("gw_xds_nacks_total", ())] == 0
    assert found[("gw_resources", (("kind", "Upstream"), ("state", "Accepted")))] == 1
    assert found[("gw_resources", (("kind", "VirtualService"), ("state", "Accepted")))] == 1
    labels = (("kind", "VirtualService"), ("name", "shop"), ("namespace", "default"))
    assert found[("gw_resource_config_status", labels)] == 0
    assert found[("gw_snapshot_resources", (("role", ROLE), ("type", "Cluster")))] == 1
    # The version exported is the one the connected Envoy acknowledged.
    (connection,) = envelope(setup.call("GET", "/proxies"))["data"]["connections"]
    acked = connection["types"]["envoy.config.cluster.v3.Cluster"]["acked"]
    version_labels = (("role", ROLE), ("type", "Cluster"), ("version", acked))
    assert found[("gw_snapshot_version_info", version_labels)] == 1
    assert found[("process_resident_memory_bytes", ())] > 0


def test_resource_metrics_follow_statuses(setup: Setup) -> None:
    bad = setup.folder / "bad.yaml"
    bad.write_text(
        """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: bad, namespace: gw-system}
spec: {static: {hosts: []}}
"""
    )
    try:
        setup.gw.wait_status("Upstream gw-system.bad", "Rejected")
        found = metrics(setup)
        assert found[("gw_resources", (("kind", "Upstream"), ("state", "Rejected")))] == 1
        labels = (("kind", "Upstream"), ("name", "bad"), ("namespace", "gw-system"))
        assert found[("gw_resource_config_status", labels)] == 1
    finally:
        bad.unlink()
        wait_until(lambda: setup.gw.status("Upstream gw-system.bad") is None)


def test_traces_show_each_stage_of_a_translation(setup: Setup) -> None:
    count = envelope(setup.call("GET", "/proxies"))["data"]["translation"]["count"]
    (setup.folder / "vs.yaml").write_text(
        (setup.folder / "vs.yaml").read_text().replace("shop", "shop2")
    )
    try:
        wait_until(lambda: setup.gw.status("VirtualService default.shop2"))
        traces = envelope(setup.call("GET", "/debug/traces?limit=1"))["data"]
        (trace,) = traces
        assert trace["id"] > count - 1
        assert [s["name"] for s in trace["spans"]] == [
            "store",
            "debounce",
            "discovery",
            "translate",
            "publish",
        ]
        assert trace["resources"] == 2 and trace["statusChanges"] >= 1
        ends = [s["startMs"] + s["durationMs"] for s in trace["spans"]]
        assert all(s["durationMs"] >= 0 for s in trace["spans"])
        assert ends == sorted(ends) and trace["durationMs"] == pytest.approx(ends[-1], abs=0.01)
        assert setup.call("GET", "/debug/traces?limit=0").status_code == 400
    finally:
        (setup.folder / "vs.yaml").write_text(
            (setup.folder / "vs.yaml").read_text().replace("shop2", "shop")
        )
        wait_until(lambda: setup.gw.status("VirtualService default.shop"))


def test_profiling(setup: Setup) -> None:
    profile = envelope(setup.call("GET", "/debug/pprof/profile?seconds=0.3"))["data"]
    assert profile["samples"] > 10
    lines = profile["folded"].splitlines()
    assert lines and all(line.rsplit(" ", 1)[1].isdigit() for line in lines)
    assert any(line.startswith("MainThread;") for line in lines)
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) >= profile["samples"]
    assert setup.call("GET", "/debug/pprof/profile?seconds=600").status_code == 400

    tasks = envelope(setup.call("GET", "/debug/pprof/tasks"))["data"]
    names = {t["name"] for t in tasks}
    assert {"controlplane", "admin", "envoy"} <= names
    threads = envelope(setup.call("GET", "/debug/pprof/threads"))["data"]
    assert "MainThread" in {t["name"] for t in threads}

    heap = envelope(setup.call("GET", "/debug/pprof/heap"))["data"]
    assert heap["tracing"] is False and "top" not in heap
    assert heap["objects"][0]["count"] > 0
    try:
        started = setup.call("PUT", "/debug/pprof/heap", json={"tracing": True})
        assert envelope(started)["data"] == {"tracing": True}
        traced = envelope(setup.call("GET", "/debug/pprof/heap"))["data"]
        assert traced["tracing"] is True and traced["tracedBytes"] > 0
        assert all({"where", "bytes", "count"} <= set(t) for t in traced["top"])
    finally:
        stopped = setup.call("PUT", "/debug/pprof/heap", json={"tracing": False})
        assert envelope(stopped)["data"] == {"tracing": False}


def test_stats_server_only_with_start_stats_server(tmp_path: Path) -> None:
    """`gw controlplane` runs the debug server only when START_STATS_SERVER is set, and
    takes its initial log level from LOG_LEVEL."""
    folder = tmp_path / "config"
    folder.mkdir()
    started = []
    try:
        for flag in ("true", ""):
            xds, debug = free_port(), free_port()
            env = gw_env(tmp_path / "home") | {"START_STATS_SERVER": flag, "LOG_LEVEL": "debug"}
            command = gw_command(
                "controlplane", "--dir", str(folder), "--bind", "127.0.0.1",
                "--xds-port", str(xds), "--debug-port", str(debug), "--dev-port", str(free_port()),
            )  # fmt: skip
            process = Process(command, env, tmp_path / f"cp-{flag or 'off'}.log")
            started.append(process)
            wait_until(lambda port=xds: _listening(port), what="the xDS port")
            url = f"http://127.0.0.1:{debug}/logging"
            if flag:
                level = wait_until(lambda url=url: httpx.get(url, timeout=1).json()["data"])
                assert level == {"level": "debug"}
            else:
                assert not _listening(debug)
    finally:
        for process in started:
            process.stop()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


# --- dev mode -----------------------------------------------------------------------------


def test_dev_mode_opens_and_closes_live(setup: Setup) -> None:
    dev = f"http://127.0.0.1:{setup.dev_port}"
    settings = setup.folder / "settings.yaml"
    assert not _listening(setup.dev_port)
    settings.write_text(
        """
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec: {devMode: true}
"""
    )
    try:
        wait_until(lambda: httpx.get(dev + "/", timeout=1).text == "Developer API")
        index = httpx.get(dev + "/", timeout=5)
        assert index.headers["content-type"].startswith("text/plain")
        assert httpx.get(dev + "/xds", timeout=5).json() == [ROLE]
        xds = httpx.get(f"{dev}/xds/{ROLE}", timeout=5)
        assert xds.text.startswith("[\n") or xds.text.startswith("{\n")  # pretty JSON
        assert [c["name"] for c in xds.json()["clusters"]] == ["echo_gw-system"]
        assert httpx.get(dev + "/xds/nope~nope", timeout=5).status_code == 404
        kinds = sorted(r["kind"] for r in httpx.get(dev + "/api", timeout=5).json())
        assert kinds == ["Settings", "Upstream", "VirtualService"]
        assert httpx.get(dev + "/proxies", timeout=5).json()[0]["name"] == "gateway-proxy"
        assert "WARNING gw.admin.devmode: devMode is deprecated as of release 1.17" in (
            setup.log.read_text()
        )
        settings.write_text(settings.read_text().replace("devMode: true", "devMode: false"))
        wait_until(lambda: not _listening(setup.dev_port), what="the dev port to close")
        settings.write_text(settings.read_text().replace("devMode: false", "devMode: true"))
        wait_until(lambda: httpx.get(dev + "/", timeout=1).text == "Developer API")
    finally:
        settings.unlink()
        wait_until(lambda: not _listening(setup.dev_port), what="the dev port to close")


# --- the proxy administration interface (Envoy's own) ---------------------------------------


def test_proxy_admin_interface(setup: Setup) -> None:
    admin = setup.gw.proxy_admin_url
    dump = httpx.post(admin + "/config_dump", timeout=10).json()
    with_eds = httpx.post(admin + "/config_dump?include_eds", timeout=10).json()
    types = lambda d: [c["@type"].rsplit(".", 1)[-1] for c in d["configs"]]  # noqa: E731
    assert "EndpointsConfigDump" not in types(dump) and "EndpointsConfigDump" in types(with_eds)
    try:
        changed = httpx.post(admin + "/logging?level=debug", timeout=5)
        assert changed.status_code == 200
        listing = httpx.get(admin + "/logging", timeout=5)
        assert listing.status_code == 200
        loggers = dict(
            line.strip().split(": ", 1)
            for line in listing.text.splitlines()
            if line.startswith("  ")
        )
        assert {"admin", "router", "jwt", "rbac", "ext_authz", "http"} <= set(loggers)
        assert set(loggers.values()) == {"debug"}
        assert httpx.post(admin + "/logging?router=error", timeout=5).status_code == 200
        loggers = httpx.get(admin + "/logging", timeout=5).text.splitlines()
        assert "  router: error" in loggers and "  http: debug" in loggers
        # Changing a level still takes a POST, as in Envoy.
        assert httpx.get(admin + "/logging?level=info", timeout=5).status_code == 405
    finally:
        httpx.post(admin + "/logging?level=info", timeout=5)
