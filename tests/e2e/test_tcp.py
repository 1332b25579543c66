"""TCP and hybrid gateways end to end: one `gw up` whose folder holds TCP gateways, a
hybrid gateway (inline parts chosen by source address and by SNI), one that delegates to a
MatchableHttpGateway, and an HttpListenerOption; real Envoy, real TCP and TLS clients.

The TCP upstreams are line echo servers this test runs in threads (each answers a line
with its name and the line); the TLS upstream behind the passthrough host is `gw echo`
serving HTTPS with a certificate of its own CA, so a client that sees that certificate
reached the upstream's TLS, not Envoy's. The hybrid gateway tells clients apart by source
address: the test connects from 127.0.0.2 as well as from 127.0.0.1 (both on the loopback
interface) to the listener on 127.0.0.1.
"""

from __future__ import annotations

import socket
import socketserver
import ssl
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from tests.e2e.test_tls import https_get
from tests.support.certs import KeyPair, make_ca, make_cert, tls_secret_yaml
from tests.support.gwctl import gwctl, parse_table
from tests.support.manifests import upstream
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e

GATEWAY_CA = make_ca("gw tcp gateway CA")
UPSTREAM_CA = make_ca("gw tcp upstream CA")
PORTS = ("tcp", "weighted", "hybrid", "delegated", "options", "limited", "tunnel")


class _LineEcho(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        name = self.server.name  # type: ignore[attr-defined]
        for line in self.rfile:
            self.wfile.write(f"{name}: ".encode() + line)


class LineEcho(socketserver.ThreadingTCPServer):
    """A TCP upstream: answers each line with its name and the line (the client speaks
    first, as in most TCP protocols: Envoy waits for a TLS ClientHello before choosing a
    chain)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, name: str) -> None:
        super().__init__(("127.0.0.1", 0), _LineEcho)
        self.name = name
        self.port = self.server_address[1]
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Connect(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        request = self.rfile.readline().decode().split()
        headers = {}
        for line in iter(self.rfile.readline, b"\r\n"):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        self.server.seen.append((request, headers))  # type: ignore[attr-defined]
        host, _, port = request[1].rpartition(":")
        with socket.create_connection((host, int(port)), timeout=5) as upstream:
            self.wfile.write(b"HTTP/1.1 200 OK\r\n\r\n")
            self.wfile.flush()
            pipe = threading.Thread(target=_copy, args=(upstream, self.connection), daemon=True)
            pipe.start()
            _copy(self.connection, upstream, self.rfile)
            pipe.join(5)


def _copy(source: socket.socket, target: socket.socket, buffered: object = None) -> None:
    reader = buffered.read1 if buffered is not None else source.recv  # type: ignore[attr-defined]
    try:
        while data := reader(65536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class ConnectProxy(socketserver.ThreadingTCPServer):
    """An HTTP/1.1 CONNECT proxy: the destination of a tunnelling TCP host, recording the
    requests it gets."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Connect)
        self.port = self.server_address[1]
        self.seen: list[tuple[list[str], dict[str, str]]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


@dataclass
class Setup:
    gw: GwUp
    ports: dict[str, int]
    folder: Path
    connect: ConnectProxy


def talk(port: int, *, sni: str | None = None, trust: KeyPair | None = None) -> tuple[str, str]:
    """(the upstream's name, its echo of a line) over a new connection, in TLS with `sni`
    when given (verified against `trust`); ("", "") when the connection is closed."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    stream: socket.socket = raw
    if sni is not None:
        context = ssl.create_default_context(cadata=trust.cert_pem if trust else None)
        stream = context.wrap_socket(raw, server_hostname=sni)
    with stream, stream.makefile("rwb") as io:
        try:
            io.write(b"hello over tcp\n")
            io.flush()
            answer = io.readline().decode().strip()
        except ConnectionError:
            return "", ""
        name, _, echoed = answer.partition(": ")
        return name, echoed


def common_name(certificate: x509.Certificate) -> str:
    return str(certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)


def gateway(name: str, port: int, body: str) -> str:
    """A Gateway `name` on 127.0.0.1:`port`; `body` is its gateway type, indented as under
    `spec`."""
    return f"""apiVersion: gateway.vendor.io/v1
kind: Gateway
metadata: {{name: {name}, namespace: gw-system}}
spec:
  bindAddress: 127.0.0.1
  bindPort: {port}
{textwrap.indent(textwrap.dedent(body).strip(), "  ")}
"""


def direct_response(name: str, status: int, body: str) -> str:
    return f"""apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: ['*']
    routes:
      - matchers: [{{prefix: /}}]
        directResponseAction: {{status: {status}, body: {body}}}
"""


TCP_HOSTS = """
tcpGateway:
  tcpHosts:
    - name: plain
      destination: {single: {upstream: {name: echo-a}}}
    - name: a
      sslConfig:
        secretRef: {name: a-tls, namespace: gw-system}
        sniDomains: [a.tcp.test]
      destination: {single: {upstream: {name: echo-a}}}
    - name: b
      sslConfig:
        secretRef: {name: b-tls, namespace: gw-system}
        sniDomains: [b.tcp.test]
      destination: {single: {upstream: {name: echo-b}}}
    - name: passthrough
      sslConfig: {sniDomains: [pass.tcp.test]}
      destination: {single: {upstream: {name: tls-echo}}}
"""
WEIGHTED = """
tcpGateway:
  tcpHosts:
    - name: split
      destination:
        multi:
          destinations:
            - {destination: {upstream: {name: echo-a}}, weight: 1}
            - {destination: {upstream: {name: echo-b}}, weight: 1}
"""
LIMITED = """
tcpGateway:
  options:
    localRatelimit: {maxTokens: 1, tokensPerFill: 1, fillInterval: 100s}
  tcpHosts:
    - name: one
      destination: {single: {upstream: {name: echo-a}}}
"""
TUNNEL = """
tcpGateway:
  options:
    tcpProxySettings:
      tunnelingConfig:
        hostname: 127.0.0.1:{port}
        headersToAdd:
          - header: {{key: x-tunnel, value: gw}}
  tcpHosts:
    - name: through-proxy
      destination: {{single: {{upstream: {{name: connect}}}}}}
"""
HYBRID = """
hybridGateway:
  matchedGateways:
    - matcher:
        sourcePrefixRanges: [{addressPrefix: 127.0.0.2, prefixLen: 32}]
      httpGateway: {virtualServices: [{name: internal, namespace: default}]}
    - matcher: {}
      httpGateway: {virtualServices: [{name: public, namespace: default}]}
    - matcher:
        sslConfig: {sniDomains: [pass.tcp.test]}
      tcpGateway:
        tcpHosts:
          - name: passthrough
            destination: {single: {upstream: {name: tls-echo}}}
    - matcher: {sslConfig: {}}
      httpGateway: {virtualServices: [{name: secure, namespace: default}]}
"""
DELEGATED = "hybridGateway: {delegatedHttpGateways: {selector: {labels: {team: web}}}}"
OPTIONS = "httpGateway: {virtualServices: [{name: public, namespace: default}]}"
OTHERS = """
apiVersion: gateway.vendor.io/v1
kind: MatchableHttpGateway
metadata: {name: web, namespace: web, labels: {team: web}}
spec:
  matcher: {}
  httpGateway: {virtualServices: [{name: delegated, namespace: default}]}
---
apiVersion: gateway.vendor.io/v1
kind: HttpListenerOption
metadata: {name: server-name, namespace: gw-system}
spec:
  targetRefs:
    - {group: gateway.vendor.io, kind: Gateway, name: options}
  options:
    httpConnectionManagerSettings: {serverName: from-option}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: secure, namespace: default}
spec:
  sslConfig:
    secretRef: {name: secure-tls, namespace: gw-system}
  virtualHost:
    domains: [secure.hybrid.test]
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200, body: secure}
"""


def manifests(ports: dict[str, int], upstreams: dict[str, int]) -> str:
    """The folder: upstreams (`name: port`), the gateways, their parts and VirtualServices."""
    docs = [upstream(name, port, "gw-system") for name, port in upstreams.items()]
    docs += [
        gateway("tcp", ports["tcp"], TCP_HOSTS),
        gateway("weighted", ports["weighted"], WEIGHTED),
        gateway("limited", ports["limited"], LIMITED),
        gateway("tunnel", ports["tunnel"], TUNNEL.format(port=upstreams["echo-b"])),
        gateway("hybrid", ports["hybrid"], HYBRID),
        gateway("delegated", ports["delegated"], DELEGATED),
        gateway("options", ports["options"], OPTIONS),
        OTHERS,
        direct_response("internal", 200, "internal"),
        direct_response("public", 403, "client ip forbidden"),
        direct_response("delegated", 200, "delegated"),
    ]
    return "---\n".join(docs)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    work = tmp_path_factory.mktemp("tcp")
    folder = work / "config"
    folder.mkdir()
    upstream = make_cert(["pass.tcp.test"], UPSTREAM_CA)
    (work / "tls.crt").write_text(upstream.cert_pem)
    (work / "tls.key").write_text(upstream.key_pem)
    tls_args = ["--tls-cert", str(work / "tls.crt"), "--tls-key", str(work / "tls.key")]
    tls_echo = Echo(work, "tls-echo", *tls_args)
    echoes = {"echo-a": LineEcho("echo-a"), "echo-b": LineEcho("echo-b")}
    connect = ConnectProxy()
    ports = {name: free_port() for name in PORTS}
    hosts = {"a": "a.tcp.test", "b": "b.tcp.test", "secure": "secure.hybrid.test"}
    secrets = "".join(
        "---\n" + tls_secret_yaml(f"{name}-tls", "gw-system", make_cert([host], GATEWAY_CA))
        for name, host in hosts.items()
    )
    upstreams = {n: e.port for n, e in echoes.items()}
    upstreams |= {"tls-echo": tls_echo.port, "connect": connect.port}
    text = manifests(ports, upstreams)
    (folder / "gateways.yaml").write_text(text + secrets)
    try:
        gw = GwUp(folder, work / "home")
        try:
            wait_until(lambda: talk(ports["tcp"])[0] == "echo-a", what="the TCP listener")
            yield Setup(gw=gw, ports=ports, folder=folder, connect=connect)
        finally:
            gw.stop()
    finally:
        connect.stop()
        tls_echo.stop()
        for echo in echoes.values():
            echo.stop()


def test_every_resource_is_accepted(setup: Setup) -> None:
    statuses = setup.gw.statuses()
    for key in [
        *(f"Gateway gw-system.{name}" for name in PORTS),
        "MatchableHttpGateway web.web",
        "HttpListenerOption gw-system.server-name",
    ]:
        assert statuses[key]["state"] == "Accepted", (key, statuses[key])


def test_plain_tcp_is_proxied_to_the_upstream(setup: Setup) -> None:
    assert talk(setup.ports["tcp"]) == ("echo-a", "hello over tcp")


def test_tls_is_terminated_with_the_certificate_of_each_sni(setup: Setup) -> None:
    port = setup.ports["tcp"]
    assert talk(port, sni="a.tcp.test", trust=GATEWAY_CA) == ("echo-a", "hello over tcp")
    assert talk(port, sni="b.tcp.test", trust=GATEWAY_CA) == ("echo-b", "hello over tcp")
    for sni in ("a.tcp.test", "b.tcp.test"):
        reply = https_get(port, sni, trust=None, alpn=["h2"])  # only the handshake
        assert common_name(reply.certificate) == sni
        assert reply.certificate.issuer == GATEWAY_CA.cert.subject


def test_tls_passthrough_shows_the_upstreams_certificate(setup: Setup) -> None:
    reply = https_get(setup.ports["tcp"], "pass.tcp.test", trust=UPSTREAM_CA, path="/through")
    assert reply.status == 200
    assert reply.headers["x-echo-name"] == "tls-echo"
    assert reply.certificate.issuer == UPSTREAM_CA.cert.subject
    assert common_name(reply.certificate) == "pass.tcp.test"


def test_weighted_destinations_reach_both_upstreams(setup: Setup) -> None:
    seen: set[str] = set()

    def both() -> bool:
        greeting, echoed = talk(setup.ports["weighted"])
        assert echoed == "hello over tcp"
        seen.add(greeting)
        return seen == {"echo-a", "echo-b"}

    wait_until(both, interval=0, what="connections to reach both weighted upstreams")


def test_local_ratelimit_closes_connections_over_the_bucket(setup: Setup) -> None:
    """One token, refilled every 100 s: the first connection passes, the next is closed."""
    port = setup.ports["limited"]
    assert talk(port) == ("echo-a", "hello over tcp")
    assert talk(port) == ("", "")


def _http_from(source: str, port: int) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=5) as client:
        return client.get(f"http://127.0.0.1:{port}/all-pets")


def test_hybrid_gateway_chooses_by_source_address(setup: Setup) -> None:
    port = setup.ports["hybrid"]
    internal = _http_from("127.0.0.2", port)
    assert (internal.status_code, internal.text) == (200, "internal")
    public = _http_from("127.0.0.1", port)
    assert (public.status_code, public.text) == (403, "client ip forbidden")


def test_hybrid_gateway_chooses_by_sni(setup: Setup) -> None:
    port = setup.ports["hybrid"]
    passed = https_get(port, "pass.tcp.test", trust=UPSTREAM_CA)
    assert passed.headers["x-echo-name"] == "tls-echo"
    assert passed.certificate.issuer == UPSTREAM_CA.cert.subject
    secure = https_get(port, "secure.hybrid.test", trust=GATEWAY_CA)
    assert (secure.status, secure.body) == (200, b"secure")
    assert common_name(secure.certificate) == "secure.hybrid.test"


def test_delegated_matchable_http_gateway_serves_its_virtual_service(setup: Setup) -> None:
    response = httpx.get(f"http://127.0.0.1:{setup.ports['delegated']}/", timeout=5)
    assert (response.status_code, response.text) == (200, "delegated")


def test_http_listener_option_sets_the_server_header(setup: Setup) -> None:
    response = httpx.get(f"http://127.0.0.1:{setup.ports['options']}/", timeout=5)
    assert response.status_code == 403
    assert response.headers["server"] == "from-option"
    hybrid = _http_from("127.0.0.1", setup.ports["hybrid"])
    assert hybrid.headers["server"] == "envoy"  # not targeted: the default


def test_gwctl_lists_the_new_kinds(setup: Setup) -> None:
    result = gwctl(setup.gw.home, "get", "matchablehttpgateway")
    assert result.returncode == 0, result.stderr
    assert parse_table(result.stdout) == [
        {
            "MATCHABLE HTTP GATEWAY": "web",
            "NAMESPACE": "web",
            "MATCHER": "any",
            "STATUS": "Accepted",
        }
    ]
    result = gwctl(setup.gw.home, "get", "hlisopts")
    assert result.returncode == 0, result.stderr
    assert parse_table(result.stdout) == [
        {
            "HTTP LISTENER OPTION": "server-name",
            "TARGETS": "options",
            "OPTIONS": "httpConnectionManagerSettings",
            "STATUS": "Accepted",
        }
    ]
    gateways = parse_table(gwctl(setup.gw.home, "get", "gateways").stdout)
    selections = {row["GATEWAY"]: row["SELECTION"] for row in gateways}
    assert selections["tcp"] == "tcp: 4 hosts"
    assert selections["hybrid"] == "hybrid: 4 matched"
    proxies = parse_table(gwctl(setup.gw.home, "get", "proxy").stdout)
    assert "default_secure" in proxies[0]["VIRTUAL HOSTS"].split("\n")


def test_tunneling_sends_the_stream_through_an_http_connect_proxy(setup: Setup) -> None:
    assert talk(setup.ports["tunnel"]) == ("echo-b", "hello over tcp")
    request, headers = setup.connect.seen[-1]
    echo_b = request[1]
    assert request[0] == "CONNECT" and echo_b.startswith("127.0.0.1:")
    assert headers["x-tunnel"] == "gw"


def test_gwctl_check_reports_a_rejected_matchable_gateway(setup: Setup) -> None:
    broken = setup.folder / "broken.yaml"
    broken.write_text(
        """apiVersion: gateway.vendor.io/v1
kind: MatchableTcpGateway
metadata: {name: unfinished, namespace: gw-system}
spec:
  tcpGateway: {tcpHosts: []}
"""
    )
    try:
        setup.gw.wait_status("MatchableTcpGateway gw-system.unfinished", "Rejected")
        result = gwctl(setup.gw.home, "check")
        assert result.returncode == 1
        assert "Checking MatchableTcpGateways... 1 Errors!" in result.stdout
        assert (
            "Found rejected matchable tcp gateway by 'gw-system': gw-system unfinished "
            "(Reason: spec.tcpGateway.tcpHosts: a tcpGateway needs at least one tcpHost"
        ) in result.stderr
    finally:
        broken.unlink()
        wait_until(lambda: setup.gw.status("MatchableTcpGateway gw-system.unfinished") is None)
    assert talk(setup.ports["tcp"]) == ("echo-a", "hello over tcp")  # never disturbed
