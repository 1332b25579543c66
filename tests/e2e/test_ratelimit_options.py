"""Rate limits on options end to end: real Envoy, the rate-limit server `gw up` runs, real
Redis (this module's own, so counters start empty), `gw echo` upstream. Nothing is faked.

- The set-style guide as written: Settings `ratelimit.setDescriptors` and a VirtualService's
  `ratelimit.rateLimits[].setActions` (in another order than the rule's entries).
- Ordered inline actions against Settings `ratelimit.descriptors`, on the host and on a
  route with `ratelimitRegular.includeVhRateLimits`.
- `ratelimitBasic` (anonymous limits per client address; a route's own scope).
- The route-level local limit at `options.ratelimit.localRatelimit`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.support.ports import free_port
from tests.support.processes import Echo, GwUp
from tests.support.redis_server import RedisServer
from tests.support.windows import in_one_window

pytestmark = pytest.mark.e2e

SETTINGS = """\
apiVersion: gw.vendor.io/v1
kind: Settings
metadata:
  name: default
  namespace: gw-system
spec:
  ratelimitServer:
    enableXRatelimitHeaders: true
  ratelimit:
    setDescriptors:
    - simpleDescriptors:
      - key: type
        value: a
      - key: number
        value: one
      rateLimit:
        requestsPerUnit: 1
        unit: MINUTE
    descriptors:
    - key: client
      rateLimit: {requestsPerUnit: 3, unit: HOUR}
    - key: team
      rateLimit: {requestsPerUnit: 2, unit: HOUR}
"""


def petstore(echo_port: int) -> str:
    """The guide's VirtualService (its upstream is `gw echo`), plus routes for the rest."""
    return f"""\
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {{name: default-petstore-8080, namespace: gw-system}}
spec: {{static: {{hosts: [{{addr: 127.0.0.1, port: {echo_port}}}]}}}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata:
  name: petstore
  namespace: gw-system
spec:
  virtualHost:
    options:
      ratelimit:
        rateLimits:
        - setActions:
          - requestHeaders:
              descriptorKey: number
              headerName: x-number
          - requestHeaders:
              descriptorKey: type
              headerName: x-type
        - actions:
          - requestHeaders: {{descriptorKey: client, headerName: x-client}}
    domains:
    - '*'
    routes:
    - matchers: [{{prefix: /team}}]
      routeAction: {{single: {{upstream: {{name: default-petstore-8080, namespace: gw-system}}}}}}
      options:
        ratelimitRegular:
          rateLimits:
          - actions: [{{requestHeaders: {{descriptorKey: team, headerName: x-team}}}}]
    - matchers: [{{prefix: /both}}]
      routeAction: {{single: {{upstream: {{name: default-petstore-8080, namespace: gw-system}}}}}}
      options:
        ratelimit:
          includeVhRateLimits: true
          rateLimits:
          - actions: [{{requestHeaders: {{descriptorKey: team, headerName: x-team}}}}]
    - matchers: [{{prefix: /local}}]
      routeAction: {{single: {{upstream: {{name: default-petstore-8080, namespace: gw-system}}}}}}
      options:
        ratelimit:
          localRatelimit: {{maxTokens: 2, tokensPerFill: 2, fillInterval: 3600s}}
    - matchers: [{{prefix: /}}]
      routeAction: {{single: {{upstream: {{name: default-petstore-8080, namespace: gw-system}}}}}}
---
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {{name: basic, namespace: default}}
spec:
  virtualHost:
    domains: [basic.example.com]
    options:
      ratelimitBasic:
        anonymousLimits: {{requestsPerUnit: 2, unit: HOUR}}
        authorizedLimits: {{requestsPerUnit: 100, unit: HOUR}}
    routes:
    - matchers: [{{prefix: /own}}]
      name: example-route
      routeAction: {{single: {{upstream: {{name: default-petstore-8080, namespace: gw-system}}}}}}
      options:
        ratelimitBasic:
          anonymousLimits: {{requestsPerUnit: 1, unit: HOUR}}
    - matchers: [{{prefix: /}}]
      routeAction: {{single: {{upstream: {{name: default-petstore-8080, namespace: gw-system}}}}}}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GwUp]:
    work = tmp_path_factory.mktemp("ratelimit-options")
    started: list[RedisServer | Echo | GwUp] = []
    try:
        redis = RedisServer(work)
        started.append(redis)
        echo = Echo(work, "petstore")
        started.append(echo)
        folder = work / "config"
        folder.mkdir()
        (folder / "settings.yaml").write_text(SETTINGS)
        (folder / "petstore.yaml").write_text(petstore(echo.port))
        up = GwUp(
            folder, work / "home", "--ratelimit-redis", redis.address, ratelimit_port=free_port()
        )
        started.append(up)
        up.wait_status("VirtualService gw-system.petstore", "Accepted")
        up.wait_status("VirtualService default.basic", "Accepted")
        up.wait_status("Settings gw-system.default", "Accepted")
        yield up
    finally:
        for thing in reversed(started):
            thing.stop()


def get(gw: GwUp, path: str, host: str | None = None, **headers: str) -> httpx.Response:
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    if host is not None:
        sent["host"] = host
    return httpx.get(gw.url + path, headers=sent, timeout=10)


def assert_limited(response: httpx.Response) -> None:
    """The global limit's answer: 429, empty body, `x-envoy-ratelimited: true`."""
    assert response.status_code == 429, (response.status_code, response.text)
    assert response.content == b""
    assert response.headers["content-length"] == "0"
    assert response.headers["x-envoy-ratelimited"] == "true"
    assert "x-echo-name" not in response.headers


def test_the_set_style_guide_as_written(gw: GwUp) -> None:
    """`type: a` and `number: one` once a minute, whatever the order of the actions, and
    whatever else the request carries; without `number` the rule does not apply."""

    def run() -> list[httpx.Response]:
        return [
            get(gw, "/api/pets", x_type="a", x_number="one"),
            get(gw, "/api/pets", x_type="a", x_number="one"),
            get(gw, "/api/pets", x_type="a", x_number="one", x_color="blue"),
            *[get(gw, "/api/pets", x_type="a") for _ in range(3)],
        ]

    first, second, third, *without_number = in_one_window(run, seconds=60)
    assert first.status_code == 200 and first.headers["x-echo-name"] == "petstore"
    assert_limited(second)
    assert second.headers["x-ratelimit-limit"] == "1, 1;w=60"
    assert_limited(third)
    assert [r.status_code for r in without_number] == [200, 200, 200]


def test_ordered_inline_actions_count_per_value(gw: GwUp) -> None:
    client, other = f"c-{uuid.uuid4()}", f"c-{uuid.uuid4()}"

    def run() -> list[httpx.Response]:
        return [get(gw, "/api", x_client=client) for _ in range(4)] + [
            get(gw, "/api", x_client=other)
        ]

    *allowed, over, fresh = in_one_window(run)
    assert [r.status_code for r in allowed] == [200, 200, 200]
    assert_limited(over)
    assert fresh.status_code == 200


def test_a_route_place_replaces_or_includes_the_host_actions(gw: GwUp) -> None:
    """/team has its own ratelimitRegular: the host's `ratelimit` (another place) still
    counts. /both sets `ratelimit` with includeVhRateLimits: the host's client actions count
    as well as the route's team ones."""
    team, client = f"t-{uuid.uuid4()}", f"c-{uuid.uuid4()}"

    def run() -> tuple[list[int], list[int]]:
        teams = [get(gw, "/team", x_team=team).status_code for _ in range(3)]
        both = [get(gw, "/both", x_team=f"t-{uuid.uuid4()}", x_client=client) for _ in range(4)]
        return teams, [r.status_code for r in both]

    teams, both = in_one_window(run)
    assert teams == [200, 200, 429]  # team: 2 an hour
    assert both == [200, 200, 200, 429]  # the host's client limit (3) counts on /both too


def test_basic_limits_per_address_with_a_scope_per_route(gw: GwUp) -> None:
    """Anonymous requests (no extauth here: every request is) are counted per client
    address: 2 an hour on the host, 1 on the route with its own ratelimitBasic. A client's
    own `x-user-id` does not make it an identified user."""
    host = "basic.example.com"

    def run() -> tuple[list[int], list[int]]:
        main = [get(gw, "/", host=host, x_user_id=f"u-{uuid.uuid4()}") for _ in range(3)]
        own = [get(gw, "/own", host=host) for _ in range(2)]
        return [r.status_code for r in main], [r.status_code for r in own]

    main, own = in_one_window(run)
    assert main == [200, 200, 429]
    assert own == [200, 429]


def test_route_local_limit_at_the_reference_place(gw: GwUp) -> None:
    responses = [get(gw, "/local") for _ in range(3)]
    assert [r.status_code for r in responses[:2]] == [200, 200]
    over = responses[2]
    assert (over.status_code, over.text) == (429, "local_rate_limited")
    assert over.headers["content-type"] == "text/plain"
