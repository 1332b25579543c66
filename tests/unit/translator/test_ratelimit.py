"""Rate limits across translations: a RateLimitConfig that becomes rejected keeps serving
its last accepted descriptors (to the rate-limit server) and the hosts that use it keep
their limits; fixing it serves the new version."""

from __future__ import annotations

from gw.api import ResourceKey
from gw.api.status import State
from gw.translator.dump import ratelimit_to_data
from gw.translator.translation import translate
from tests.unit.translator.test_fallback import snapshot

SETTINGS = """
apiVersion: gw.vendor.io/v1
kind: Settings
metadata: {name: default, namespace: gw-system}
spec:
  ratelimitServer:
    ratelimitServerRef: {name: ratelimit, namespace: gw-system}
"""
SERVER = """
apiVersion: gw.vendor.io/v1
kind: Upstream
metadata: {name: ratelimit, namespace: gw-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 18081}]}}
"""
APP = """
apiVersion: gateway.vendor.io/v1
kind: VirtualService
metadata: {name: app, namespace: default}
spec:
  virtualHost:
    options:
      rateLimitConfigs: {refs: [{name: limits}]}
    routes:
      - matchers: [{prefix: /}]
        directResponseAction: {status: 200}
"""


def limits(per_minute: int, extra: str = "") -> str:
    return f"""
apiVersion: ratelimit.vendor.io/v1alpha1
kind: RateLimitConfig
metadata: {{name: limits, namespace: default}}
spec:
  raw:
    descriptors:
      - key: generic_key
        value: all
        rateLimit: {{unit: MINUTE, requestsPerUnit: {per_minute}}}
    rateLimits:
      - actions: [{{genericKey: {{descriptorValue: all}}}}]{extra}
"""


def served_limit(result: object) -> float:
    (config,) = ratelimit_to_data(result.ratelimit)["rateLimitConfigs"]  # type: ignore[attr-defined]
    return float(config["descriptors"][0]["limit"]["requests_per_unit"])


RLC = ResourceKey("RateLimitConfig", "default", "limits")
VS = ResourceKey("VirtualService", "default", "app")


def test_a_rejected_config_keeps_serving_its_last_accepted_version() -> None:
    first = translate(snapshot(SETTINGS, SERVER, APP, limits(5)))
    assert first.statuses[VS].state is State.ACCEPTED
    assert served_limit(first) == 5

    broken = limits(7, "\n        limit: {}")
    second = translate(snapshot(SETTINGS, SERVER, APP, broken), previous=first.accepted)
    assert second.statuses[RLC].state is State.REJECTED
    assert second.statuses[VS].state is State.REJECTED
    assert served_limit(second) == 5  # the last accepted descriptors
    (listener,) = second.proxy.listeners
    (vhost,) = listener.virtual_hosts
    assert vhost.ratelimit is not None and vhost.ratelimit.policies  # still limited
    assert vhost.ratelimit_server is not None

    fixed = translate(snapshot(SETTINGS, SERVER, APP, limits(9)), previous=second.accepted)
    assert fixed.statuses[RLC].state is State.ACCEPTED
    assert served_limit(fixed) == 9


def test_configs_nobody_uses_are_still_served() -> None:
    result = translate(snapshot(SETTINGS, SERVER, limits(3)))
    assert served_limit(result) == 3
    (listener,) = result.proxy.listeners
    assert listener.virtual_hosts == ()
