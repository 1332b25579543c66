"""Upstream options through a real Envoy: load balancing by hash, active health checks
(HTTP and gRPC) skipping a failing endpoint, failover, outlier ejection after 5xx,
circuit-breaker overflow, HTTP/2 to the upstream, subsets, stream duration and requests per
connection, Unix-socket and PROXY-protocol upstreams.

The upstreams are real servers in the test process (`tests/support/upstream_servers.py`)
or `gw echo`; Envoy's own statistics and `/clusters` view confirm what the responses show.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.files import save
from tests.support.processes import Echo, GwUp
from tests.support.upstream_servers import (
    GrpcHealthServer,
    H2Server,
    NamedServer,
    ProxyProtocolServer,
)
from tests.support.wait import wait_until

pytestmark = pytest.mark.e2e


@dataclass
class Env:
    gw: GwUp
    folder: Path
    work: Path

    def serve(self, name: str, upstream_spec: str, *, route_options: str = "") -> None:
        """Upstream `name` (spec given as YAML lines) and a virtual service `name.test`
        routing everything to it; waits until both are accepted."""
        save(
            self.folder / f"{name}.yaml",
            f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: {name}, namespace: default}}
spec:
{upstream_spec}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: {name}, namespace: default}}
spec:
  virtualHost:
    domains: [{name}.test]
    routes:
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: {name}}}}}}}
{route_options}
""",
        )
        self.gw.wait_status(f"Upstream default.{name}", "Accepted")
        self.gw.wait_status(f"VirtualService default.{name}", "Accepted")

    def get(self, name: str, path: str = "/", **kwargs: object) -> httpx.Response:
        return self.gw.get(path, host=f"{name}.test", **kwargs)  # type: ignore[arg-type]

    def served_by(self, name: str, path: str = "/", **kwargs: object) -> str:
        response = self.get(name, path, **kwargs)
        assert response.status_code == 200, response.text
        return str(response.json()["name"])

    def host_flags(self, cluster: str, port: int) -> str:
        """Envoy's health flags for one endpoint of a cluster (`/clusters`)."""
        text = httpx.get(self.gw.proxy_admin_url + "/clusters", timeout=5).text
        prefix = f"{cluster}::127.0.0.1:{port}::health_flags::"
        return next(
            (line[len(prefix) :] for line in text.splitlines() if line.startswith(prefix)), ""
        )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    work = tmp_path_factory.mktemp("upstreams")
    folder = work / "config"
    folder.mkdir()
    gw = GwUp(folder, work / "home")
    try:
        yield Env(gw, folder, work)
    finally:
        gw.stop()


@pytest.fixture
def servers() -> Iterator[list[NamedServer]]:
    """Servers a test starts; all stopped at its end."""
    started: list[NamedServer] = []
    yield started
    for server in started:
        server.stop()


def fast_checks(checker: str) -> str:
    """`healthChecks` with one check every 200ms that decides after one answer."""
    return (
        "  healthChecks:\n"
        "    - {timeout: 1s, interval: 200ms, healthyThreshold: 1, unhealthyThreshold: 1,\n"
        f"       {checker}}}\n"
    )


def hosts(*ports: int) -> str:
    return "".join(f"      - {{addr: 127.0.0.1, port: {p}}}\n" for p in ports)


def test_ring_hash_keeps_each_key_on_one_host(env: Env, servers: list[NamedServer]) -> None:
    a, b = NamedServer("a"), NamedServer("b")
    servers += [a, b]
    env.serve(
        "sticky",
        f"  static:\n    hosts:\n{hosts(a.port, b.port)}  loadBalancerConfig: {{ringHash: {{}}}}",
        route_options="        options: {lbHash: {hashPolicies: [{header: x-user}]}}",
    )
    wait_until(lambda: env.get("sticky").status_code == 200, what="the sticky route")
    chosen = {}
    for user in range(16):
        seen = {env.served_by("sticky", headers={"x-user": f"user-{user}"}) for _ in range(4)}
        assert len(seen) == 1, f"user-{user} reached {seen}"
        chosen[user] = seen.pop()
    assert set(chosen.values()) == {"a", "b"}, "the keys spread over both hosts"


def test_http_health_checks_skip_a_failing_endpoint(env: Env, servers: list[NamedServer]) -> None:
    good, sick = NamedServer("good"), NamedServer("sick", sick_path="/healthz")
    servers += [good, sick]
    assert httpx.get(f"http://127.0.0.1:{sick.port}/").status_code == 200, "sick serves traffic"
    env.serve(
        "checked",
        f"  static:\n    hosts:\n{hosts(good.port, sick.port)}"
        + fast_checks("httpHealthCheck: {path: /healthz}"),
    )
    wait_until(
        lambda: "failed_active_hc" in env.host_flags("checked_default", sick.port),
        what="Envoy to find the sick endpoint unhealthy",
    )
    assert env.host_flags("checked_default", good.port) == "healthy"
    assert {env.served_by("checked") for _ in range(20)} == {"good"}


def test_every_one_of_several_health_checks_must_pass(env: Env, servers: list[NamedServer]) -> None:
    """Two checks on one upstream (Envoy 1.40 runs both, each named by gw): a host that
    passes the first but fails the second is taken out."""
    good, half = NamedServer("good"), NamedServer("half", sick_path="/deep")
    servers += [good, half]
    second = (
        "    - {timeout: 1s, interval: 200ms, healthyThreshold: 1, unhealthyThreshold: 1,\n"
        "       httpHealthCheck: {path: /deep}}\n"
    )
    env.serve(
        "twice",
        f"  static:\n    hosts:\n{hosts(good.port, half.port)}"
        + fast_checks("httpHealthCheck: {path: /healthz}")
        + second,
    )
    wait_until(
        lambda: "failed_active_hc" in env.host_flags("twice_default", half.port),
        what="Envoy to find the endpoint that fails the second check unhealthy",
    )
    assert env.host_flags("twice_default", good.port) == "healthy"
    assert {env.served_by("twice") for _ in range(20)} == {"good"}


def test_grpc_health_checks_mark_a_not_serving_server(env: Env) -> None:
    serving, stopped = GrpcHealthServer(serving=True), GrpcHealthServer(serving=False)
    try:
        env.serve(
            "grpc-checked",
            f"  static:\n    hosts:\n{hosts(serving.port, stopped.port)}  useHttp2: true\n"
            + fast_checks("grpcHealthCheck: {serviceName: shop.Catalog}"),
        )
        wait_until(
            lambda: "failed_active_hc" in env.host_flags("grpc-checked_default", stopped.port),
            what="Envoy to find the NOT_SERVING server unhealthy",
        )
        assert env.host_flags("grpc-checked_default", serving.port) == "healthy"
    finally:
        serving.stop()
        stopped.stop()


def test_failover_goes_to_the_next_priority_when_the_primary_fails(
    env: Env, servers: list[NamedServer]
) -> None:
    primary, backup = NamedServer("primary", sick_path="/healthz"), NamedServer("backup")
    servers += [primary, backup]
    env.serve(
        "failing-over",
        f"  static:\n    hosts:\n{hosts(primary.port)}"
        + fast_checks("httpHealthCheck: {path: /healthz}")
        + "  failover:\n"
        "    prioritizedLocalities:\n"
        "      - localityEndpoints:\n"
        f"          - lbEndpoints: [{{address: 127.0.0.1, port: {backup.port}}}]",
    )
    wait_until(
        lambda: (
            env.get("failing-over").status_code == 200 and env.served_by("failing-over") == "backup"
        ),
        what="traffic to fail over to the backup",
    )
    assert {env.served_by("failing-over") for _ in range(10)} == {"backup"}
    assert primary.requests > 0, "the primary was health checked"


def test_outlier_detection_ejects_a_host_that_answers_5xx(
    env: Env, servers: list[NamedServer]
) -> None:
    good, broken = NamedServer("good"), NamedServer("broken", failing=True)
    servers += [good, broken]
    env.serve(
        "ejecting",
        f"  static:\n    hosts:\n{hosts(good.port, broken.port)}"
        "  outlierDetection:\n"
        "    {consecutive5xx: 2, interval: 10s, baseEjectionTime: 60s, maxEjectionPercent: 50}",
    )
    stat = "cluster.ejecting_default.outlier_detection.ejections_enforced_consecutive_5xx"
    wait_until(
        lambda: env.get("ejecting").status_code in (200, 500) and env.gw.envoy_stat(stat) >= 1,
        what="the broken host to be ejected",
    )
    assert [env.get("ejecting").status_code for _ in range(20)] == [200] * 20


def test_circuit_breakers_answer_503_past_their_limits(env: Env) -> None:
    echo = Echo(env.work, "breaker")
    try:
        env.serve(
            "breaker",
            f"  static:\n    hosts:\n{hosts(echo.port)}"
            "  circuitBreakers: {maxConnections: 1, maxPendingRequests: 1, maxRequests: 1}",
        )
        wait_until(lambda: env.get("breaker").status_code == 200, what="the breaker route")
        slow = {"x-echo-delay-ms": "1500"}
        with ThreadPoolExecutor(max_workers=4) as pool:
            responses = list(pool.map(lambda _: env.get("breaker", headers=slow), range(4)))
        overflowed = [r for r in responses if r.status_code == 503]
        assert any(r.status_code == 200 for r in responses)
        assert overflowed, [r.status_code for r in responses]
        assert all(r.headers.get("x-envoy-overloaded") == "true" for r in overflowed)
        assert env.gw.envoy_stat("cluster.breaker_default.upstream_rq_pending_overflow") >= 1
    finally:
        echo.stop()


def test_use_http2_speaks_http2_to_the_upstream(env: Env) -> None:
    server = H2Server("h2")
    try:
        env.serve("plain-to-h2", f"  static:\n    hosts:\n{hosts(server.port)}")
        env.serve("h2", f"  static:\n    hosts:\n{hosts(server.port)}\n  useHttp2: true")
        response = wait_until(
            lambda: (r := env.get("h2", "/x")).status_code == 200 and r, what="HTTP/2 traffic"
        )
        assert response.json() == {"name": "h2", "protocol": "HTTP/2", "path": "/x"}
        # Over HTTP/1.1 (no useHttp2) the server's HTTP/2 preface is no response: 502.
        assert env.get("plain-to-h2").status_code == 502
    finally:
        server.stop()


def test_a_subset_route_reaches_only_the_matching_endpoint(
    env: Env, servers: list[NamedServer]
) -> None:
    v1, v2 = NamedServer("v1"), NamedServer("v2")
    servers += [v1, v2]
    save(
        env.folder / "versions.yaml",
        f"""
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: versions, namespace: default}}
spec:
  static:
    hosts:
      - {{addr: 127.0.0.1, port: {v1.port}, metadata: {{envoy.lb: {{version: v1}}}}}}
      - {{addr: 127.0.0.1, port: {v2.port}, metadata: {{envoy.lb: {{version: v2}}}}}}
    subsetSpec: {{selectors: [{{keys: [version]}}]}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: versions, namespace: default}}
spec:
  virtualHost:
    domains: [versions.test]
    routes:
      - matchers: [{{prefix: /v2}}]
        routeAction:
          single: {{upstream: {{name: versions}}, subset: {{values: {{version: v2}}}}}}
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: versions}}}}}}
""",
    )
    env.gw.wait_status("VirtualService default.versions", "Accepted")
    wait_until(lambda: env.get("versions", "/v2").status_code == 200, what="the subset route")
    assert {env.served_by("versions", "/v2") for _ in range(10)} == {"v2"}
    assert {env.served_by("versions", "/all") for _ in range(10)} == {"v1", "v2"}


def test_max_stream_duration_ends_a_slow_response_with_504(env: Env) -> None:
    echo = Echo(env.work, "slow")
    try:
        env.serve(
            "slow",
            f"  static:\n    hosts:\n{hosts(echo.port)}"
            "  connectionConfig: {commonHttpProtocolOptions: {maxStreamDuration: 300ms}}",
        )
        wait_until(lambda: env.get("slow").status_code == 200, what="the slow route")
        response = env.get("slow", headers={"x-echo-delay-ms": "5000"})
        assert (response.status_code, response.text) == (
            504,
            "upstream max stream duration reached",
        )
    finally:
        echo.stop()


def test_max_requests_per_connection_opens_new_connections(
    env: Env, servers: list[NamedServer]
) -> None:
    server = NamedServer("counted")
    servers.append(server)
    env.serve(
        "limited",
        f"  static:\n    hosts:\n{hosts(server.port)}"
        "  connectionConfig: {maxRequestsPerConnection: 2}",
    )
    env.serve("unlimited", f"  static:\n    hosts:\n{hosts(server.port)}")
    for name in ("limited", "unlimited"):

        def answers(name: str = name) -> bool:
            return env.get(name).status_code == 200

        wait_until(answers, what=f"the {name} route")  # the first of six requests
        for _ in range(5):
            env.served_by(name)
    stat = env.gw.envoy_stat
    sent = stat("cluster.limited_default.upstream_rq_total")
    assert sent >= 6
    assert stat("cluster.limited_default.upstream_cx_total") == (sent + 1) // 2
    assert stat("cluster.limited_default.upstream_cx_max_requests") >= 2
    assert stat("cluster.unlimited_default.upstream_cx_total") == 1


def test_a_pipe_upstream_serves_a_unix_socket(env: Env, servers: list[NamedServer]) -> None:
    socket_path = env.work / "app.sock"
    servers.append(NamedServer("pipe", socket_path=socket_path))
    env.serve("pipe", f"  pipe: {{path: {socket_path}}}")
    response = wait_until(
        lambda: (r := env.get("pipe", "/over-a-socket")).status_code == 200 and r,
        what="traffic over the Unix socket",
    )
    assert response.json() == {"name": "pipe", "path": "/over-a-socket"}


def test_proxy_protocol_header_goes_first(env: Env) -> None:
    server = ProxyProtocolServer()
    try:
        env.serve(
            "proxied", f"  static:\n    hosts:\n{hosts(server.port)}\n  proxyProtocolVersion: V1"
        )
        response = wait_until(
            lambda: (r := env.get("proxied", "/pp")).status_code == 200 and r,
            what="traffic with a PROXY header",
        )
        assert response.json()["proxy_protocol"].startswith("PROXY TCP")
        assert response.json()["request"].startswith("GET /pp HTTP/1.1")
    finally:
        server.stop()
