"""Traffic policies end to end through Envoy: faults, shadowing, path and host rewrites,
CSRF, request buffering, stream timeouts, route metadata, attempt counts, CORS merging,
routes whose upstream the request names (dynamic forward proxy, clusterHeader), WebSocket
upgrades, and the established guides' direct-response and redirect examples.

Upstreams are `gw echo` processes (`alpha`, `beta`), a recording upstream that keeps the
shadowed copies (`tests/support/recorder.py`) and a WebSocket echo server
(`tests/support/websocket_echo.py`); the last two are test peers outside the product.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.manifests import upstream
from tests.support.ports import free_port
from tests.support.processes import SRC, Echo, GwUp, Process, gw_env
from tests.support.recorder import Recorder
from tests.support.wait import wait_until
from tests.support.websocket_echo import Refused, exchange

pytestmark = pytest.mark.e2e

ROOT = SRC.parent
CONFIG = Path(__file__).with_name("traffic_policies.yaml")
KEYS = [
    "VirtualService default.faults",
    "VirtualService default.shadow",
    "VirtualService default.rewrites",
    "VirtualService default.csrf",
    "VirtualService default.buffer",
    "VirtualService default.timeouts",
    "VirtualService default.metadata",
    "VirtualService default.forward",
    "VirtualService default.cors",
    "VirtualService default.websocket",
    "VirtualService gw-system.test-direct-response",
    "VirtualService gw-system.test-redirect",
    "VirtualService docs.docsmgmt-http",
    "VirtualService default.forward-proxy-vs",
]


class WebSocketEcho:
    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        env = gw_env(workdir)
        env["PYTHONPATH"] = f"{ROOT}:{env['PYTHONPATH']}"
        self.process = Process(
            [sys.executable, "-m", "tests.support.websocket_echo", str(self.port)],
            env,
            workdir / f"websocket-{self.port}.log",
        )
        wait_until(self._answers, what=f"websocket echo on {self.port}")

    def _answers(self) -> bool:
        if not self.process.alive():
            raise RuntimeError(f"websocket echo exited:\n{self.process.output()}")
        return httpx.get(f"http://127.0.0.1:{self.port}/", timeout=1).text == "plain"

    def stop(self) -> None:
        self.process.stop()


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    work = tmp_path_factory.mktemp("traffic")
    alpha, beta, recorder = Echo(work, "alpha"), Echo(work, "beta"), Recorder("shadow")
    websocket = WebSocketEcho(work)
    try:
        folder = work / "config"
        folder.mkdir()
        (folder / "upstreams.yaml").write_text(
            "---".join(
                [
                    upstream("alpha", alpha.port),
                    upstream("beta", beta.port),
                    upstream("shadow", recorder.port),
                    upstream("websocket", websocket.port),
                ]
            )
        )
        (folder / "traffic.yaml").write_text(CONFIG.read_text())
        up = GwUp(folder, work / "home")
        up.alpha_port = alpha.port  # type: ignore[attr-defined]
        up.recorder = recorder  # type: ignore[attr-defined]
        try:
            for key in KEYS:
                up.wait_status(key, "Accepted")
            yield up
        finally:
            up.stop()
    finally:
        for peer in (alpha, beta, recorder, websocket):
            peer.stop()


def send(gw: GwUp, host: str, path: str, method: str = "GET", **kwargs: object) -> httpx.Response:
    headers = {"host": host, **dict(kwargs.pop("headers", {}) or {})}  # type: ignore[call-overload]
    return httpx.request(method, gw.url + path, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


def echoed(response: httpx.Response) -> dict[str, object]:
    assert response.status_code == 200, (response.status_code, response.text)
    data: dict[str, object] = response.json()
    return data


def stat_sum(gw: GwUp, suffix: str) -> int:
    """The sum of Envoy's counters ending in `suffix` (the listener's stat prefix varies)."""
    text = httpx.get(gw.proxy_admin_url + "/stats", params={"filter": suffix}, timeout=5).text
    total = 0
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        if key.endswith(suffix) and value.strip().isdigit():
            total += int(value)
    return total


# --- faults ------------------------------------------------------------------------------


def test_fault_abort_answers_with_its_status(gw: GwUp) -> None:
    response = send(gw, "faults.example.com", "/abort")
    assert response.status_code == 503
    assert response.text == "fault filter abort"
    teapot = send(gw, "faults.example.com", "/teapot")  # from a RouteOption, direct response
    assert teapot.status_code == 418


def test_fault_delay_holds_the_request(gw: GwUp) -> None:
    before = stat_sum(gw, "fault.delays_injected")
    started = time.monotonic()
    assert echoed(send(gw, "faults.example.com", "/delay"))["name"] == "alpha"
    assert time.monotonic() - started >= 1.0
    assert stat_sum(gw, "fault.delays_injected") == before + 1


def test_routes_without_faults_are_untouched(gw: GwUp) -> None:
    assert echoed(send(gw, "faults.example.com", "/calm"))["name"] == "alpha"


# --- shadowing ---------------------------------------------------------------------------


def test_shadowed_copy_reaches_the_shadow_upstream(gw: GwUp) -> None:
    recorder: Recorder = gw.recorder  # type: ignore[attr-defined]
    response = send(gw, "shadow.example.com", "/orders/1", method="POST", content=b"order")
    assert echoed(response)["name"] == "alpha"  # the client sees the primary's answer only
    copies = wait_until(lambda: recorder.requests("/orders/1"), what="the shadowed copy")
    assert copies[0].method == "POST" and copies[0].body == b"order"
    assert copies[0].headers["host"] == "shadow.example.com-shadow"


def test_shadow_host_rewrite_literal(gw: GwUp) -> None:
    recorder: Recorder = gw.recorder  # type: ignore[attr-defined]
    assert echoed(send(gw, "shadow.example.com", "/literal/x"))["name"] == "alpha"
    copies = wait_until(lambda: recorder.requests("/literal/x"), what="the shadowed copy")
    assert copies[0].headers["host"] == "orders-v2.example.com"


# --- rewrites ----------------------------------------------------------------------------


def test_regex_rewrites_of_the_guide(gw: GwUp) -> None:
    assert echoed(send(gw, "rewrite.example.com", "/foo/bar"))["path"] == "/foo/baz"
    assert echoed(send(gw, "rewrite.example.com", "/pre/mid/end"))["path"] == "/end/swap/mid"


def test_host_rewrites_seen_by_the_upstream(gw: GwUp) -> None:
    by_header = echoed(
        send(gw, "rewrite.example.com", "/by-header", headers={"x-target-host": "t.example.com"})
    )
    headers = by_header["headers"]
    assert isinstance(headers, dict)
    assert headers["host"] == "t.example.com"
    assert headers["x-forwarded-host"] == "rewrite.example.com"
    tenants = echoed(send(gw, "rewrite.example.com", "/tenants/acme/orders"))["headers"]
    assert isinstance(tenants, dict) and tenants["host"] == "acme.internal"


def test_auto_host_rewrite_on_a_static_ip_upstream(gw: GwUp) -> None:
    headers = echoed(send(gw, "rewrite.example.com", "/auto"))["headers"]
    assert isinstance(headers, dict) and headers["host"] == "127.0.0.1"


# --- CSRF --------------------------------------------------------------------------------


def test_csrf_refuses_a_cross_origin_post(gw: GwUp) -> None:
    response = send(gw, "csrf.example.com", "/", "POST", headers={"origin": "http://evil.test"})
    assert response.status_code == 403
    assert response.text == "Invalid origin"
    missing = send(gw, "csrf.example.com", "/", "POST")
    assert missing.status_code == 403


def test_csrf_lets_same_and_additional_origins_through(gw: GwUp) -> None:
    same = send(gw, "csrf.example.com", "/", "POST", headers={"origin": "http://csrf.example.com"})
    assert echoed(same)["name"] == "alpha"
    extra = send(
        gw, "csrf.example.com", "/", "POST", headers={"origin": "https://app.trusted.test"}
    )
    assert echoed(extra)["name"] == "alpha"
    safe = send(gw, "csrf.example.com", "/", "GET", headers={"origin": "http://evil.test"})
    assert echoed(safe)["name"] == "alpha"  # only mutating methods are checked


def test_csrf_shadow_mode_counts_but_lets_through(gw: GwUp) -> None:
    before = stat_sum(gw, "csrf.request_invalid")
    shadow = send(gw, "csrf.example.com", "/shadow", "POST", headers={"origin": "http://evil.test"})
    assert echoed(shadow)["name"] == "alpha"
    assert stat_sum(gw, "csrf.request_invalid") == before + 1


# --- buffer ------------------------------------------------------------------------------


def test_buffer_limit_answers_413(gw: GwUp) -> None:
    big = send(gw, "buffer.example.com", "/small", "POST", content=b"x" * 100)
    assert big.status_code == 413
    fits = send(gw, "buffer.example.com", "/small", "POST", content=b"x" * 10)
    assert echoed(fits)["body"] == "x" * 10
    elsewhere = send(gw, "buffer.example.com", "/other", "POST", content=b"x" * 100)
    assert echoed(elsewhere)["body"] == "x" * 100


def test_a_weighted_destination_has_its_own_buffer_limit_and_headers(gw: GwUp) -> None:
    big = send(gw, "buffer.example.com", "/weighted", "POST", content=b"x" * 100)
    assert big.status_code == 413
    fits = echoed(send(gw, "buffer.example.com", "/weighted", "POST", content=b"x" * 10))
    headers = fits["headers"]
    assert isinstance(headers, dict) and headers["x-destination"] == "alpha"


# --- stream timeouts ---------------------------------------------------------------------


def test_idle_timeout_ends_a_silent_upstream(gw: GwUp) -> None:
    response = send(gw, "timeouts.example.com", "/idle", headers={"x-echo-delay-ms": "3000"})
    assert response.status_code == 504
    assert response.text == "stream timeout"


def test_max_stream_duration_ends_a_long_request(gw: GwUp) -> None:
    response = send(gw, "timeouts.example.com", "/stream", headers={"x-echo-delay-ms": "3000"})
    assert response.status_code == 504
    assert response.text == "downstream duration timeout"
    assert echoed(send(gw, "timeouts.example.com", "/stream"))["name"] == "alpha"


# --- metadata, attempt counts, CORS merge ------------------------------------------------


def test_route_metadata_is_readable_by_header_substitution(gw: GwUp) -> None:
    headers = echoed(send(gw, "metadata.example.com", "/"))["headers"]
    assert isinstance(headers, dict) and headers["x-team"] == "edge"


def test_attempt_counts_sent_up_and_back(gw: GwUp) -> None:
    response = send(gw, "metadata.example.com", "/")
    headers = echoed(response)["headers"]
    assert isinstance(headers, dict) and headers["x-envoy-attempt-count"] == "1"
    assert response.headers["x-envoy-attempt-count"] == "1"


def test_virtual_clusters_count_their_requests(gw: GwUp) -> None:
    stat = "vhost.default_metadata.vcluster.team_pages.upstream_rq_total"
    before = stat_sum(gw, stat)
    assert echoed(send(gw, "metadata.example.com", "/pages/12"))["name"] == "alpha"
    send(gw, "metadata.example.com", "/pages/x")  # not the pattern
    send(gw, "metadata.example.com", "/pages/12", "POST")  # not the method
    assert stat_sum(gw, stat) == before + 1


def test_cors_union_merges_expose_headers(gw: GwUp) -> None:
    origin = {"origin": "https://api.example.com"}
    response = send(gw, "cors.example.com", "/api", headers=origin)
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "https://api.example.com"
    assert response.headers["access-control-expose-headers"] == "x-request-id,x-trace,x-api-version"


# --- routes whose upstream the request names ---------------------------------------------


def test_dynamic_forward_proxy_goes_where_the_header_says(gw: GwUp) -> None:
    target = f"127.0.0.1:{gw.alpha_port}"  # type: ignore[attr-defined]
    data = echoed(send(gw, "forward.example.com", "/dfp/x", headers={"x-target": target}))
    assert data["name"] == "alpha" and data["path"] == "/dfp/x"
    headers = data["headers"]
    assert isinstance(headers, dict) and headers["host"] == target


def test_cluster_header_picks_the_cluster(gw: GwUp) -> None:
    by_beta = send(gw, "forward.example.com", "/by-cluster", headers={"x-cluster": "beta_default"})
    assert echoed(by_beta)["name"] == "beta"
    by_alpha = send(
        gw, "forward.example.com", "/by-cluster", headers={"x-cluster": "alpha_default"}
    )
    assert echoed(by_alpha)["name"] == "alpha"
    unknown = send(gw, "forward.example.com", "/by-cluster", headers={"x-cluster": "nope_default"})
    assert unknown.status_code == 503


def test_connect_tunnel_through_the_dynamic_forward_proxy(gw: GwUp) -> None:
    target = f"127.0.0.1:{gw.alpha_port}"  # type: ignore[attr-defined]
    with socket.create_connection(("127.0.0.1", gw.http_port), timeout=10) as sock:
        sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        head = _read_until(sock, b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        sock.sendall(b"GET /tunnelled HTTP/1.1\r\nHost: inside\r\nConnection: close\r\n\r\n")
        answer = _read_until(sock, b"")
    assert answer.startswith(b"HTTP/1.1 200")
    assert b'"path":"/tunnelled"' in answer and b"x-echo-name: alpha" in answer


def _read_until(sock: socket.socket, marker: bytes) -> bytes:
    """Bytes from `sock` up to `marker` (or until it closes, when `marker` is empty)."""
    data = b""
    while not marker or marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


# --- WebSocket upgrades ------------------------------------------------------------------


def test_websocket_echo_through_envoy(gw: GwUp) -> None:
    assert exchange(gw.http_port, "ws.example.com", "/ws/chat", "hello") == "echo: hello"


def test_websocket_refused_where_the_route_disables_it(gw: GwUp) -> None:
    with pytest.raises(Refused) as refused:
        exchange(gw.http_port, "ws.example.com", "/off/ws/chat", "hello")
    assert refused.value.status == 403


# --- the guides' direct response and redirect examples ----------------------------------


def test_direct_response_guide(gw: GwUp) -> None:
    response = send(gw, "foo", "/")
    assert response.status_code == 200
    assert response.text == "Hello, world!"


def test_redirect_guides(gw: GwUp) -> None:
    moved = send(gw, "foo-redirect", "/")
    assert moved.status_code == 301
    assert moved.headers["location"] == "http://google.com/"
    https = send(gw, "docs.solo.io", "/guides?x=1")
    assert https.status_code == 301
    assert https.headers["location"] == "https://docs.solo.io/guides?x=1"
