"""Rate limits end to end: real Envoy, real rate-limit servers (the one `gw up` runs in
process and a standalone `gw ratelimit`), real Redis, `gw echo` upstream.

Global limits count per descriptor value in fixed windows of an hour; a request sequence
that happens to straddle the top of the hour is run again (`in_one_window`). Nothing is
faked.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.support.gwctl import gwctl, parse_table
from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp, Process, gw_command, gw_env
from tests.support.redis_server import RedisServer
from tests.support.wait import wait_until
from tests.support.windows import in_one_window

pytestmark = pytest.mark.e2e

LIMIT = 3
T = TypeVar("T")
CLUSTER = "ratelimit_gw-system"


def settings(server_port: int, *, deny_on_fail: bool, before_auth: bool = False) -> str:
    return f"""\
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {{name: default, namespace: gw-system}}
spec:
  ratelimitServer:
    ratelimitServerRef: {{name: ratelimit, namespace: gw-system}}
    requestTimeout: 2s
    denyOnFail: {str(deny_on_fail).lower()}
    rateLimitBeforeAuth: {str(before_auth).lower()}
    enableXRatelimitHeaders: true
---
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: ratelimit, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {server_port}}}]}}}}
"""


def app(echo_port: int) -> str:
    return f"""\
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: app, namespace: default}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {echo_port}}}]}}}}
---
apiVersion: ratelimit.vendor.io/v1alpha1
kind: RateLimitConfig
metadata: {{name: per-client, namespace: default}}
spec:
  raw:
    descriptors:
      - key: client
        rateLimit: {{unit: HOUR, requestsPerUnit: {LIMIT}}}
    rateLimits:
      - actions: [{{requestHeaders: {{headerName: x-client, descriptorKey: client}}}}]
---
apiVersion: ratelimit.vendor.io/v1alpha1
kind: RateLimitConfig
metadata: {{name: per-team, namespace: default}}
spec:
  raw:
    descriptors:
      - key: team
        rateLimit: {{unit: HOUR, requestsPerUnit: 2}}
    rateLimits:
      - actions: [{{requestHeaders: {{headerName: x-team, descriptorKey: team}}}}]
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: app, namespace: default}}
spec:
  virtualHost:
    options:
      rateLimitConfigs: {{refs: [{{name: per-client}}]}}
    routes:
      - matchers: [{{prefix: /local-a}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
        options:
          localRatelimit: {{maxTokens: 2, tokensPerFill: 2, fillInterval: 3600s}}
      - matchers: [{{prefix: /local-b}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
        options:
          localRatelimit: {{maxTokens: 2, tokensPerFill: 2, fillInterval: 3600s}}
      - matchers: [{{prefix: /early}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
        options:
          rateLimitEarlyConfigs: {{refs: [{{name: per-team}}]}}
      - matchers: [{{prefix: /}}]
        routeAction: {{single: {{upstream: {{name: app}}}}}}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("ratelimit")
    started: list[Any] = []
    try:
        redis = RedisServer(work)
        started.append(redis)
        echo = Echo(work, "app")
        started.append(echo)
        folder = work / "config"
        folder.mkdir()
        inproc = free_port()
        (folder / "settings.yaml").write_text(settings(inproc, deny_on_fail=False))
        (folder / "app.yaml").write_text(app(echo.port))
        gw = GwUp(folder, work / "home", "--ratelimit-redis", redis.address, ratelimit_port=inproc)
        started.append(gw)
        gw.wait_status("VirtualService default.app", "Accepted")
        gw.wait_status("RateLimitConfig default.per-client", "Accepted")
        yield {"gw": gw, "redis": redis, "folder": folder, "work": work, "inproc": inproc}
    finally:
        for thing in reversed(started):
            thing.stop()


def get(
    gw: GwUp, path: str, client: str | None = None, extra: dict[str, str] | None = None
) -> httpx.Response:
    headers = {"x-client": client} if client else {}
    return httpx.get(gw.url + path, headers={**headers, **(extra or {})}, timeout=10)


def exhaust(gw: GwUp, client: str) -> list[httpx.Response]:
    """LIMIT + 1 requests as `client`."""
    return [get(gw, "/anything", client) for _ in range(LIMIT + 1)]


def served(gw: GwUp, f: Callable[[dict[str, Any]], bool]) -> bool:
    """True when Envoy runs a ratelimit filter whose config satisfies `f`."""
    dump = httpx.get(gw.proxy_admin_url + "/config_dump", timeout=5).json()
    for config in dump["configs"]:
        for listener in config.get("dynamic_listeners", []):
            for chain in listener["active_state"]["listener"]["filter_chains"]:
                for http_filter in chain["filters"][0]["typed_config"]["http_filters"]:
                    if http_filter["name"] == "envoy.filters.http.ratelimit":
                        return f(http_filter["typed_config"])
    return False


def switch_server(env: dict[str, Any], port: int, *, deny_on_fail: bool) -> None:
    """Point Settings at the server on `port` and wait until Envoy uses it."""
    gw: GwUp = env["gw"]
    (env["folder"] / "settings.yaml").write_text(settings(port, deny_on_fail=deny_on_fail))

    def applied() -> bool:
        clusters = httpx.get(gw.proxy_admin_url + "/clusters", timeout=5).text
        return f"{CLUSTER}::127.0.0.1:{port}::" in clusters and served(
            gw, lambda c: bool(c.get("failure_mode_deny", False)) == deny_on_fail
        )

    wait_until(applied, what=f"Envoy to use the rate-limit server on {port}")


def test_the_request_over_the_limit_gets_429_with_the_limit_headers(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    responses = in_one_window(lambda: exhaust(gw, f"c-{uuid.uuid4()}"))
    for i, ok in enumerate(responses[:LIMIT]):
        assert ok.status_code == 200
        assert ok.headers["x-echo-name"] == "app"
        assert ok.headers["x-ratelimit-limit"] == f"{LIMIT}, {LIMIT};w=3600"
        assert ok.headers["x-ratelimit-remaining"] == str(LIMIT - 1 - i)
        assert 0 < int(ok.headers["x-ratelimit-reset"]) <= 3600
    over = responses[LIMIT]
    assert over.status_code == 429
    assert over.content == b""
    assert over.headers["x-envoy-ratelimited"] == "true"
    assert over.headers["x-ratelimit-limit"] == f"{LIMIT}, {LIMIT};w=3600"
    assert over.headers["x-ratelimit-remaining"] == "0"
    assert 0 < int(over.headers["x-ratelimit-reset"]) <= 3600
    assert "x-echo-name" not in over.headers  # never reached the upstream


def test_gwctl_lists_the_config_and_checks_it(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    listed = gwctl(gw.home, "get", "rlc")
    assert listed.returncode == 0, listed.stderr
    assert parse_table(listed.stdout) == [
        {"RATE LIMIT CONFIG": "per-client", "STATUS": "Accepted", "DESCRIPTORS": "client"},
        {"RATE LIMIT CONFIG": "per-team", "STATUS": "Accepted", "DESCRIPTORS": "team"},
    ]
    checked = gwctl(gw.home, "check", "--exclude", "deployments", "--exclude", "pods")
    assert "Checking RateLimitConfigs... OK" in checked.stdout, checked.stdout
    served = httpx.get(gw.admin_url + "/snapshots/xds", timeout=5).json()
    configs = served["data"]["gw-system~ratelimit"]["rateLimitConfigs"]
    assert [c["config_id"] for c in configs] == ["default.per-client", "default.per-team"]


def test_each_descriptor_value_has_its_own_counter(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    first, second = f"a-{uuid.uuid4()}", f"b-{uuid.uuid4()}"

    def run() -> tuple[int, list[int]]:
        limited = exhaust(gw, first)[-1].status_code
        return limited, [get(gw, "/anything", second).status_code for _ in range(LIMIT)]

    limited, others = in_one_window(run)
    assert limited == 429
    assert others == [200] * LIMIT
    # Requests without the header produce no descriptor: the server is not even asked.
    assert get(gw, "/anything").status_code == 200


def test_early_configs_are_enforced_with_the_hosts_configs(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    team, client = f"t-{uuid.uuid4()}", f"c-{uuid.uuid4()}"

    def run() -> tuple[list[int], int]:
        early = [get(gw, "/early", None, {"x-team": team}).status_code for _ in range(3)]
        # The host's rateLimitConfigs still apply on the route (field by field).
        host = [get(gw, "/early", client).status_code for _ in range(LIMIT + 1)]
        return early, host[-1]

    early, host = in_one_window(run)
    assert early == [200, 200, 429]
    assert host == 429
    assert get(gw, "/anything", None, {"x-team": team}).status_code == 200  # route only


def test_local_limits_are_per_route(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    a = [get(gw, "/local-a") for _ in range(3)]
    assert [r.status_code for r in a] == [200, 200, 429]
    assert a[2].text == "local_rate_limited"
    assert a[2].headers["content-type"] == "text/plain"
    assert a[2].headers["x-ratelimit-limit"] == "2"
    assert a[2].headers["x-ratelimit-remaining"] == "0"
    # The other route's bucket is its own; the host's other routes have no local limit.
    assert [get(gw, "/local-b").status_code for _ in range(2)] == [200, 200]
    assert get(gw, "/elsewhere").status_code == 200


def test_redis_outage_follows_deny_on_fail_and_recovers(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    redis: RedisServer = env["redis"]
    try:
        redis.stop()
        # denyOnFail false (the default): the server answers an error, Envoy lets it pass.
        assert get(gw, "/anything", f"r-{uuid.uuid4()}").status_code == 200
        assert "redis at 127.0.0.1:" in gw.process.output()
        assert "is unreachable" in gw.process.output()
        # gwctl check names it: the server runs, but every check it makes fails.
        checked = gwctl(gw.home, "check", "-x", "pods")
        assert "Checking Deployments... 1 Errors!" in checked.stdout, checked.stdout
        assert (
            "Deployment ratelimit in namespace gw-system is not available! "
            f"(redis at {redis.address} is unreachable: "
        ) in checked.stderr
        switch_server(env, env["inproc"], deny_on_fail=True)
        denied = get(gw, "/anything", f"r-{uuid.uuid4()}")
        assert denied.status_code == 500
        assert denied.content == b""
        redis.start()
        client = f"r-{uuid.uuid4()}"
        wait_until(
            lambda: get(gw, "/anything", client).status_code == 200,
            what="limits to be checked again once Redis is back",
        )
        assert "is back" in gw.process.output()
        assert "Checking Deployments... OK" in gwctl(gw.home, "check", "-x", "pods").stdout
        assert in_one_window(lambda: exhaust(gw, f"r-{uuid.uuid4()}"))[-1].status_code == 429
    finally:
        if redis.process is None:
            redis.start()
        switch_server(env, env["inproc"], deny_on_fail=False)


def test_a_killed_standalone_server_follows_deny_on_fail(env: dict[str, Any]) -> None:
    gw: GwUp = env["gw"]
    work: Path = env["work"]
    port = free_port()

    def start() -> Process:
        server = Process(
            gw_command(
                "ratelimit",
                "--xds",
                f"127.0.0.1:{gw.xds_port}",
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--redis",
                env["redis"].address,
            ),  # fmt: skip
            gw_env(work / "home"),
            work / f"ratelimit-{port}.log",
        )
        wait_until(lambda: "serving 2 configs" in server.output(), what="gw ratelimit config")
        return server

    server = start()
    try:
        switch_server(env, port, deny_on_fail=False)
        client = f"k-{uuid.uuid4()}"
        assert in_one_window(lambda: exhaust(gw, client))[-1].status_code == 429

        server.popen.kill()
        server.stop()
        # Fail open: even the exhausted client passes while no server answers.
        assert get(gw, "/anything", client).status_code == 200
        assert get(gw, "/anything", f"k-{uuid.uuid4()}").status_code == 200

        switch_server(env, port, deny_on_fail=True)
        denied = get(gw, "/anything", f"k-{uuid.uuid4()}")
        assert denied.status_code == 500
        assert denied.content == b""
        # Requests that produce no descriptor never call the server: unaffected.
        assert get(gw, "/anything").status_code == 200

        server = start()
        # The counters are in Redis: the restarted server still limits the exhausted client.
        wait_until(
            lambda: get(gw, "/anything", client).status_code == 429,
            what="the restarted server to enforce the limit",
        )
    finally:
        server.stop()
        switch_server(env, env["inproc"], deny_on_fail=False)


LOCKED = """\
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: locked, namespace: default}
spec:
  virtualHost:
    domains: [locked.test]
    options:
      rbac: {}                      # no policies: RBAC denies every request (403)
      rateLimitConfigs: {refs: [{name: per-client}]}
      rateLimitEarlyConfigs: {refs: [{name: per-team}]}
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: app}}}
"""


def early_limits(gw: GwUp) -> int:
    """How many rate limits the early filter has on the `locked` host, as Envoy runs it."""
    dump = httpx.get(gw.proxy_admin_url + "/config_dump", timeout=5).json()
    for config in dump["configs"]:
        for route_config in config.get("dynamic_route_configs", []):
            for vhost in route_config["route_config"].get("virtual_hosts", []):
                if vhost["name"] == "default_locked":
                    early = vhost.get("typed_per_filter_config", {}).get("gw.ratelimit.early")
                    return len(early["rate_limits"]) if early else 0
    return -1


def test_limits_run_before_or_after_authorization_as_configured(env: dict[str, Any]) -> None:
    """REFERENCE Appendix A: rateLimitConfigs are checked after RBAC (a denied request is
    not counted) unless Settings say rateLimitBeforeAuth; rateLimitEarlyConfigs always
    before."""
    gw: GwUp = env["gw"]
    (env["folder"] / "locked.yaml").write_text(LOCKED)
    gw.wait_status("VirtualService default.locked", "Warning")  # RBAC without policies
    wait_until(lambda: early_limits(gw) == 1, what="the locked host in Envoy")

    def locked(headers: dict[str, str]) -> int:
        return httpx.get(gw.url, headers={"host": "locked.test", **headers}).status_code

    def run() -> tuple[list[int], list[int], list[int]]:
        client, team = f"l-{uuid.uuid4()}", f"t-{uuid.uuid4()}"
        (env["folder"] / "settings.yaml").write_text(settings(env["inproc"], deny_on_fail=False))
        wait_until(lambda: early_limits(gw) == 1, what="rate limits after RBAC in Envoy")
        after = [locked({"x-client": client}) for _ in range(LIMIT + 1)]
        early = [locked({"x-team": team}) for _ in range(3)]
        (env["folder"] / "settings.yaml").write_text(
            settings(env["inproc"], deny_on_fail=False, before_auth=True)
        )
        wait_until(lambda: early_limits(gw) == 2, what="rateLimitBeforeAuth in Envoy")
        before = [locked({"x-client": client}) for _ in range(LIMIT + 1)]
        return after, early, before

    try:
        after, early, before = in_one_window(run)
        assert after == [403] * (LIMIT + 1)  # RBAC answered first: nothing was counted
        assert early == [403, 403, 429]
        assert before == [403] * LIMIT + [429]
    finally:
        (env["folder"] / "locked.yaml").unlink()
        switch_server(env, env["inproc"], deny_on_fail=False)
