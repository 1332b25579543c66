"""A Gateway's `httpConnectionManagerSettings` and listener options, end to end: one `gw up`
whose Gateways each set some (so the built-in gateways are gone), real Envoy, `gw echo` as
the upstream (it reports what it received), raw sockets where an HTTP client would tidy the
request up (PROXY protocol preambles, unfinished headers, odd paths).

- `tuned` sets many settings to values other than gw's defaults;
- `defaults` sets none, and shows gw's defaults next to them;
- `proxied` reads the PROXY protocol;
- `limited` allows one connection at a time and sets socket options and a buffer limit.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.manifests import gateway, upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.raw_http import Answer, get, one
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

ECHO = "app"
TUNED_SETTINGS = """
        xffNumTrustedHops: 1
        via: gw-test
        serverName: gw-edge
        generateRequestId: false
        headersWithUnderscoresAction: REJECT_CLIENT_REQUEST
        normalizePath: false
        mergeSlashes: false
        pathWithEscapedSlashesAction: KEEP_UNCHANGED
        maxRequestHeadersKb: 2
        maxHeadersCount: 20
        requestHeadersTimeout: 1s
        streamIdleTimeout: 1s
        idleTimeout: 2s
        earlyHeaderManipulation:
          headersToAdd: [{header: {key: x-early, value: '%DOWNSTREAM_LOCAL_PORT%'}}]
          headersToRemove: [x-drop-me]"""
DEFAULTS_SETTINGS = """
        preserveExternalRequestId: true
        serverHeaderTransformation: PASS_THROUGH
        headersWithUnderscoresAction: ALLOW"""


@dataclass
class Setup:
    gw: GwUp
    ports: dict[str, int]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("listener-options")
    echo = Echo(root, ECHO)
    folder = root / "config"
    folder.mkdir()
    ports = {name: free_port() for name in ("tuned", "defaults", "proxied", "limited")}
    gateways = [
        gateway(
            "tuned",
            ports["tuned"],
            http_options="\n      httpConnectionManagerSettings:" + TUNED_SETTINGS,
        ),
        gateway(
            "defaults",
            ports["defaults"],
            http_options="\n      httpConnectionManagerSettings:" + DEFAULTS_SETTINGS,
        ),
        gateway("proxied", ports["proxied"], options="{proxyProtocol: {}}"),
        gateway(
            "limited",
            ports["limited"],
            options="{perConnectionBufferLimitBytes: 16384, socketOptions: "
            "[{level: 1, name: 9, intValue: 1, state: STATE_LISTENING}]}",
            http_options="{connectionLimit: {maxActiveConnections: 1}}",
        ),
    ]
    (folder / "all.yaml").write_text(
        "---".join([*gateways, upstream("app", echo.port), virtual_service("app", "*", "app")])
    )
    try:
        gw = GwUp(folder, root / "home")
        try:
            for name in ports:
                gw.wait_status(f"Gateway gw-system.{name}", "Accepted")
            wait_until(
                lambda: all(_answers(p) for p in ports.values() if p != ports["proxied"]),
                what="every gateway's listener",
            )
            yield Setup(gw, ports)
        finally:
            gw.stop()
    finally:
        echo.stop()


def _answers(port: int) -> bool:
    try:
        return one(port, get("/", "Host: app.test")).status == 200
    except OSError:
        return False


def echoed(answer: Answer) -> dict[str, Any]:
    seen = answer.echoed(ECHO)
    assert seen is not None, f"not answered by the upstream: {answer}"
    return seen


def ask(setup: Setup, gateway: str, path: str, *lines: str) -> Answer:
    return one(setup.ports[gateway], get(path, "Host: app.test", *lines))


# --- client addresses, request ids, server and via -------------------------------------------


def test_xff_num_trusted_hops_trusts_the_last_proxy_in_front(setup: Setup) -> None:
    """With one trusted hop the client is the address that proxy appended; with gw's
    default (none) it is the TCP peer, whatever the header says."""
    xff = "X-Forwarded-For: 203.0.113.7"
    tuned = echoed(ask(setup, "tuned", "/", xff))["headers"]
    assert tuned["x-envoy-external-address"] == "203.0.113.7"
    default = echoed(ask(setup, "defaults", "/", xff))["headers"]
    assert default["x-envoy-external-address"] == "127.0.0.1"


def test_via_server_name_and_request_ids(setup: Setup) -> None:
    tuned = ask(setup, "tuned", "/")
    assert tuned.headers["server"] == "gw-edge"
    assert tuned.headers["via"] == "gw-test"
    seen = echoed(tuned)["headers"]
    assert seen["via"] == "gw-test"
    assert "x-request-id" not in seen  # generateRequestId: false
    generated = echoed(ask(setup, "defaults", "/"))["headers"]["x-request-id"]
    assert len(generated) == 36  # a UUID, as Envoy generates by default
    kept = ask(setup, "defaults", "/", "X-Request-Id: client-id")
    assert kept.headers["server"] == "uvicorn"  # PASS_THROUGH: the upstream's own
    assert echoed(kept)["headers"]["x-request-id"] == "client-id"  # preserveExternalRequestId


def test_early_header_manipulation_runs_before_routing(setup: Setup) -> None:
    seen = echoed(ask(setup, "tuned", "/", "X-Drop-Me: 1", "X-Early: forged"))["headers"]
    assert "x-drop-me" not in seen
    # Appended to the client's (`append` defaults to true): a second header line.
    assert seen["x-early"] == f"forged, {setup.ports['tuned']}"


# --- paths and header names --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "tuned", "default"),
    [
        ("/a/../b", "/a/../b", "/b"),
        ("//a//b", "//a//b", "/a/b"),
        ("/a%2Fb", "/a/b", None),  # the upstream decodes %2F; gw's default redirects
    ],
)
def test_path_handling(setup: Setup, path: str, tuned: str, default: str | None) -> None:
    assert echoed(ask(setup, "tuned", path))["path"] == tuned
    answer = ask(setup, "defaults", path)
    if default is None:
        assert (answer.status, answer.headers["location"]) == (307, "/a/b")
    else:
        assert echoed(answer)["path"] == default


def test_headers_with_underscores(setup: Setup) -> None:
    assert ask(setup, "tuned", "/", "X_User: admin").status == 400  # REJECT_CLIENT_REQUEST
    assert echoed(ask(setup, "defaults", "/", "X_User: admin"))["headers"]["x_user"] == "admin"


def test_header_size_and_count_limits(setup: Setup) -> None:
    assert ask(setup, "tuned", "/", "X-Big: " + "a" * 3000).status == 431
    assert ask(setup, "tuned", "/", *[f"X-H{i}: v" for i in range(30)]).status == 431
    assert echoed(ask(setup, "defaults", "/", "X-Big: " + "a" * 3000))


# --- timeouts ------------------------------------------------------------------------------------


def _read_until_closed(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_request_headers_timeout(setup: Setup) -> None:
    with socket.create_connection(("127.0.0.1", setup.ports["tuned"]), timeout=15) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: app.test\r\n")
        assert _read_until_closed(sock).startswith(b"HTTP/1.1 408 ")


def test_idle_connection_is_closed(setup: Setup) -> None:
    """`idleTimeout: 2s`: a keep-alive connection with nothing in flight is closed."""
    with socket.create_connection(("127.0.0.1", setup.ports["tuned"]), timeout=15) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        _read_until_closed(sock)  # Envoy closes it (a socket timeout would raise)
        assert time.monotonic() - started >= 1.5


def test_stream_idle_timeout(setup: Setup) -> None:
    """`streamIdleTimeout: 1s`: an upstream silent for 4 s is given up on (504); the route's
    own timeout (15 s) is not reached."""
    slow = ask(setup, "tuned", "/", "X-Echo-Delay-Ms: 4000")
    assert slow.status == 504
    assert slow.body == b"stream timeout"
    assert echoed(ask(setup, "defaults", "/", "X-Echo-Delay-Ms: 1500"))


# --- PROXY protocol ------------------------------------------------------------------------------

REQUEST = b"GET / HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n"


def _proxy_v2(source: str, port: int) -> bytes:
    """A PROXY protocol v2 header: TCP over IPv4 from `source`:`port` to 127.0.0.1."""
    addresses = socket.inet_aton(source) + socket.inet_aton("127.0.0.1")
    addresses += struct.pack("!HH", port, 8080)
    signature = b"\r\n\r\n\x00\r\nQUIT\n"
    return signature + bytes([0x21, 0x11]) + struct.pack("!H", len(addresses)) + addresses


@pytest.mark.parametrize(
    "preamble",
    [b"PROXY TCP4 198.51.100.20 127.0.0.1 40000 8080\r\n", _proxy_v2("198.51.100.20", 40000)],
    ids=["v1", "v2"],
)
def test_proxy_protocol_names_the_client(setup: Setup, preamble: bytes) -> None:
    answer = one(setup.ports["proxied"], preamble + REQUEST)
    assert echoed(answer)["headers"]["x-envoy-external-address"] == "198.51.100.20"


def test_a_connection_without_the_proxy_header_is_closed(setup: Setup) -> None:
    with socket.create_connection(("127.0.0.1", setup.ports["proxied"]), timeout=10) as sock:
        sock.sendall(REQUEST)
        try:
            assert _read_until_closed(sock) == b""
        except ConnectionResetError:
            pass  # closed as hard


# --- connection limit, socket options, buffer limit ---------------------------------------------


def test_connection_limit_closes_the_connection_over_it(setup: Setup) -> None:
    port = setup.ports["limited"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as first:
        first.sendall(b"GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
        assert first.recv(65536).startswith(b"HTTP/1.1 200 ")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as second:
            second.sendall(REQUEST)
            try:
                assert _read_until_closed(second) == b""
            except ConnectionResetError:
                pass
        local_port = first.getsockname()[1]
        # SO_KEEPALIVE on the listening socket is inherited by the connection Envoy accepted.
        ss = subprocess.run(
            ["ss", "-tnoH", "state", "established", f"( dport = :{local_port} )"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "timer:(keepalive" in ss, ss
    wait_until(lambda: _answers(port), what="the connection slot to be free again")


def test_the_listener_options_reach_envoy(setup: Setup) -> None:
    dump = httpx.get(setup.gw.proxy_admin_url + "/config_dump", timeout=5).json()
    listeners = {
        listener["name"]: listener["active_state"]["listener"]
        for config in dump["configs"]
        for listener in config.get("dynamic_listeners", [])
    }
    limited = listeners[f"listener-127.0.0.1-{setup.ports['limited']}"]
    assert limited["per_connection_buffer_limit_bytes"] == 16384
    assert limited["socket_options"][0]["state"] == "STATE_LISTENING"
