"""A Gateway's `httpGateway.options` plugins end to end: one `gw up` whose Gateways each set
some, real Envoy, `gw echo` upstreams (they report what they received), raw sockets where an
HTTP client would tidy the request up.

The gRPC upstream for gRPC-Web is a test peer: a grpc.aio server with one method,
`gw.test.Echo/Say`, answering `echo:` and the request's bytes (no gRPC service of the
product is involved; what the browser-side client gets back is what Envoy translated).
"""

from __future__ import annotations

import base64
import gzip
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import wrappers_pb2

from tests.support.grpc_peer import GrpcPeer, greeter_descriptor_set
from tests.support.manifests import gateway, upstream, virtual_service
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.raw_http import one
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


def grpc_echo() -> GrpcPeer:
    """`gw.test.Echo/Say` answers `echo:` and the request's bytes; `gw.test.Greeter/Hello`
    answers `hello <name>` (`google.protobuf.StringValue` both ways)."""

    async def say(request: bytes, context: Any) -> bytes:
        return b"echo:" + request

    async def hello(request: bytes, context: Any) -> bytes:
        name = wrappers_pb2.StringValue.FromString(request).value
        return wrappers_pb2.StringValue(value=f"hello {name}").SerializeToString()

    return GrpcPeer(
        grpc.method_handlers_generic_handler(
            "gw.test.Echo", {"Say": grpc.unary_unary_rpc_method_handler(say)}
        ),
        grpc.method_handlers_generic_handler(
            "gw.test.Greeter", {"Hello": grpc.unary_unary_rpc_method_handler(hello)}
        ),
    )


#: Each gateway and its `httpGateway.options` (YAML flow mappings).
GATEWAYS = {
    "probed": "{healthCheck: {path: /healthz}}",
    "zipped": "{gzip: {contentType: [application/json], contentLength: 30}}",
    "zipped-html": "{gzip: {contentType: [text/html]}}",
    "plain": "{}",
    "no-grpc-web": "{grpcWeb: {disable: true}}",
    "limited": "{httpLocalRatelimit: {defaultLimit: {maxTokens: 2, fillInterval: 1h}}}",
    "conn-limited": "{networkLocalRatelimit: {maxTokens: 1, fillInterval: 1h}}",
    "sticky": "{statefulSession: {cookieBased: {cookie: {name: gw-host, path: /, ttl: 1h}}}}",
    "tuned": (
        "{router: {suppressEnvoyHeaders: true}, leftmostXffAddress: true, "
        "headerValidationSettings: {disableHttp1MethodValidation: {}}}"
    ),
}


def hosts() -> str:
    """Virtual services besides `app.test`: a dead upstream, the gRPC upstream, a two-host
    upstream, the client address as the upstream sees it."""
    return """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: extra, namespace: default}
spec:
  virtualHost:
    domains: ["*"]
    routes:
    - matchers: [{prefix: /dead}]
      routeAction: {single: {upstream: {name: dead, namespace: default}}}
    - matchers: [{prefix: /gw.test.}]
      routeAction: {single: {upstream: {name: grpc, namespace: default}}}
    - matchers: [{prefix: /sticky}]
      routeAction: {single: {upstream: {name: pair, namespace: default}}}
    - matchers: [{prefix: /}]
      routeAction: {single: {upstream: {name: app, namespace: default}}}
      options:
        headerManipulation:
          requestHeadersToAdd:
          - {header: {key: x-client, value: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%'}}
"""


def upstreams(echo: Echo, left: Echo, right: Echo, grpc_port: int) -> list[str]:
    pair = f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: pair, namespace: default}}
spec:
  static:
    hosts: [{{addr: 127.0.0.1, port: {left.port}}}, {{addr: 127.0.0.1, port: {right.port}}}]
"""
    grpc_upstream = f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: grpc, namespace: default}}
spec: {{useHttp2: true, static: {{hosts: [{{addr: 127.0.0.1, port: {grpc_port}}}]}}}}
"""
    return [upstream("app", echo.port), upstream("dead", free_port()), pair, grpc_upstream]


@dataclass
class Setup:
    gw: GwUp
    ports: dict[str, int]

    def url(self, gateway: str, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[gateway]}{path}"

    def get(self, gateway: str, path: str, **headers: str) -> httpx.Response:
        return httpx.get(self.url(gateway, path), headers=headers, timeout=5)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("listener-plugins")
    echo, left, right = Echo(root, "app"), Echo(root, "left"), Echo(root, "right")
    grpc_server = grpc_echo()
    ports = {name: free_port() for name in GATEWAYS}
    folder = root / "config"
    folder.mkdir()
    documents = [
        gateway(name, ports[name], http_options=options) for name, options in GATEWAYS.items()
    ]
    ports["counted"] = free_port()
    documents.append(gateway("counted", ports["counted"], options="{tcpStats: true}"))
    ports["transcoded"] = free_port()
    descriptors = base64.b64encode(greeter_descriptor_set()).decode()
    transcoder = (
        f"{{grpcJsonTranscoder: {{protoDescriptorBin: {descriptors}, "
        "services: [gw.test.Greeter], autoMapping: true}}"
    )
    documents.append(gateway("transcoded", ports["transcoded"], http_options=transcoder))
    documents += upstreams(echo, left, right, grpc_server.port)
    documents += [virtual_service("app", "app.test", "app"), hosts()]
    (folder / "all.yaml").write_text("---".join(documents))
    try:
        gw = GwUp(folder, root / "home")
        try:
            for name in ports:
                gw.wait_status(f"Gateway gw-system.{name}", "Accepted")
            ready = [n for n in ports if n not in ("limited", "conn-limited")]
            wait_until(
                lambda: all(_answers(ports[n]) for n in ready), what="every gateway's listener"
            )
            yield Setup(gw, ports)
        finally:
            gw.stop()
    finally:
        grpc_server.stop()
        for server in (echo, left, right):
            server.stop()


def _answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


# --- health check ----------------------------------------------------------------------------


def test_the_health_check_path_is_answered_by_the_proxy(setup: Setup) -> None:
    """No upstream is involved: the path answers 200 on any Host while the route behind it
    goes nowhere (503), and only on the gateway that asks for it."""
    assert setup.get("probed", "/dead").status_code == 503
    answer = setup.get("probed", "/healthz", host="nowhere.test")
    assert answer.status_code == 200
    assert "x-echo-name" not in answer.headers
    assert setup.get("plain", "/healthz").headers["x-echo-name"] == "app"


def test_the_health_check_fails_while_the_proxy_is_failed(setup: Setup) -> None:
    """An operator (or a drain) fails the proxy through its admin port: the probe then
    answers 503, so that a load balancer takes the proxy out first."""
    admin = setup.gw.proxy_admin_url
    httpx.post(f"{admin}/healthcheck/fail", timeout=5).raise_for_status()
    try:
        assert setup.get("probed", "/healthz").status_code == 503
    finally:
        httpx.post(f"{admin}/healthcheck/ok", timeout=5).raise_for_status()
    assert setup.get("probed", "/healthz").status_code == 200


# --- gzip ------------------------------------------------------------------------------------


def test_gzip_compresses_responses_of_the_listed_types(setup: Setup) -> None:
    with httpx.Client() as client:
        request = client.build_request(
            "GET", setup.url("zipped", "/zip"), headers={"accept-encoding": "gzip"}
        )
        answer = client.send(request, stream=True)
        raw = b"".join(answer.iter_raw())
    assert answer.headers["content-encoding"] == "gzip"
    assert b'"path":"/zip"' in gzip.decompress(raw)
    plain = setup.get("zipped", "/zip", **{"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers


def test_gzip_leaves_other_types_alone(setup: Setup) -> None:
    """The echo answers JSON; a gateway compressing only text/html leaves it as it is."""
    answer = setup.get("zipped-html", "/zip", **{"accept-encoding": "gzip"})
    assert answer.status_code == 200
    assert "content-encoding" not in answer.headers


# --- gRPC-Web --------------------------------------------------------------------------------


def _grpc_web_call(setup: Setup, gateway: str, message: bytes) -> httpx.Response:
    return httpx.post(
        setup.url(gateway, "/gw.test.Echo/Say"),
        content=b"\x00" + struct.pack(">I", len(message)) + message,
        headers={"content-type": "application/grpc-web+proto", "x-grpc-web": "1"},
        timeout=5,
    )


def _frames(body: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    while at < len(body):
        flag, size = body[at], struct.unpack(">I", body[at + 1 : at + 5])[0]
        out.append((flag, body[at + 5 : at + 5 + size]))
        at += 5 + size
    return out


def test_a_grpc_web_call_reaches_a_grpc_upstream(setup: Setup) -> None:
    """gRPC-Web is on by default: the browser's framed request becomes gRPC for the upstream,
    and its answer comes back as gRPC-Web, trailers in the last frame."""
    answer = _grpc_web_call(setup, "plain", b"hello")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/grpc-web")
    frames = _frames(answer.content)
    assert frames[0] == (0, b"echo:hello")
    assert frames[-1][0] == 0x80 and b"grpc-status:0" in frames[-1][1]


def test_grpc_web_switched_off_reaches_the_upstream_untranslated(setup: Setup) -> None:
    answer = _grpc_web_call(setup, "no-grpc-web", b"hello")
    assert b"echo:hello" not in answer.content


# --- gateway-wide token buckets --------------------------------------------------------------


def test_the_gateway_wide_bucket_limits_every_request(setup: Setup) -> None:
    """Two tokens, refilled hourly: the third request on the gateway is refused by Envoy
    itself, whatever its host or path."""
    codes = [setup.get("limited", f"/bucket/{i}").status_code for i in range(2)]
    third = setup.get("limited", "/other", host="elsewhere.test")
    assert codes == [200, 200]
    assert (third.status_code, third.text) == (429, "local_rate_limited")


def test_the_connection_bucket_closes_connections_beyond_it(setup: Setup) -> None:
    port = setup.ports["conn-limited"]
    first = one(port, b"GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
    assert first.status == 200
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: app.test\r\n\r\n")
        try:
            received = sock.recv(65536)
        except ConnectionResetError:
            received = b""
    assert received == b""


# --- sticky sessions -------------------------------------------------------------------------


def test_a_session_cookie_keeps_the_upstream_host(setup: Setup) -> None:
    first = setup.get("sticky", "/sticky")
    cookie = first.cookies.get("gw-host")
    assert cookie, first.headers
    host = first.headers["x-echo-name"]
    later = {
        setup.get("sticky", "/sticky", cookie=f"gw-host={cookie}").headers["x-echo-name"]
        for _ in range(6)
    }
    assert later == {host}


# --- router and HTTP settings ----------------------------------------------------------------


def test_router_settings_suppress_envoys_headers(setup: Setup) -> None:
    assert "x-envoy-upstream-service-time" in setup.get("plain", "/").headers
    assert "x-envoy-upstream-service-time" not in setup.get("tuned", "/").headers


def test_the_leftmost_forwarded_address_is_the_client(setup: Setup) -> None:
    xff = {"x-forwarded-for": "203.0.113.9, 198.51.100.2"}
    seen = setup.get("tuned", "/", **xff).json()["headers"]
    assert seen["x-client"] == "203.0.113.9"
    assert setup.get("plain", "/", **xff).json()["headers"]["x-client"] == "127.0.0.1"


def test_http1_methods_beyond_the_standard_ones(setup: Setup) -> None:
    """Envoy refuses an unknown method (400) unless method validation is off; then the
    upstream answers it (the echo allows none such: 405)."""
    request = b"FOOBAR /x HTTP/1.1\r\nHost: app.test\r\n\r\n"
    assert one(setup.ports["plain"], request).status == 400
    assert one(setup.ports["tuned"], request).status == 405


def test_tcp_stats_count_each_connections_tcp_segments(setup: Setup) -> None:
    """`options.tcpStats`: the kernel's TCP statistics of the listener's connections become
    Envoy statistics (segments sent, retransmits, ...)."""
    assert setup.get("counted", "/").status_code == 200

    def sent() -> int:
        stats = httpx.get(
            setup.gw.proxy_admin_url + "/stats", params={"filter": "tcp_stats.cx_tx_segments"}
        ).text
        return sum(int(line.rsplit(": ", 1)[1]) for line in stats.splitlines() if ": " in line)

    assert wait_until(sent, what="TCP segments counted") > 0


def test_a_json_client_calls_a_grpc_service(setup: Setup) -> None:
    """grpcJsonTranscoder: a JSON POST to /<service>/<method> reaches the gRPC upstream as
    the method's message, and its answer comes back as JSON; without the transcoder the
    same request is no gRPC call."""
    answer = httpx.post(setup.url("transcoded", "/gw.test.Greeter/Hello"), json="gw", timeout=5)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == "hello gw"
    plain = httpx.post(setup.url("plain", "/gw.test.Greeter/Hello"), json="gw", timeout=5)
    assert plain.text != '"hello gw"'
