"""`loadBalancerConfig` on an Upstream (how Envoy picks an endpoint) and `lbHash` on a route
(what a hashing policy — ring hash, maglev — hashes)."""

from __future__ import annotations

from pydantic import Field

from gw.api.duration import Duration
from gw.api.meta import Model


class Empty(Model):
    """A message without fields (`google.protobuf.Empty`): written `{}`."""


class SlowStartConfig(Model):
    slow_start_window: Duration | None = None
    aggression: float | None = None
    min_weight_percent: float | None = None


class RoundRobin(Model):
    slow_start_config: SlowStartConfig | None = None


class LeastRequest(Model):
    choice_count: int = Field(default=0, ge=0)
    slow_start_config: SlowStartConfig | None = None


class RingHashConfig(Model):
    minimum_ring_size: int = Field(default=0, ge=0)
    maximum_ring_size: int = Field(default=0, ge=0)


class RingHash(Model):
    ring_hash_config: RingHashConfig | None = None


class LoadBalancerConfig(Model):
    """At most one of `roundRobin` (the default), `leastRequest`, `random`, `ringHash` and
    `maglev`."""

    healthy_panic_threshold: float | None = None
    update_merge_window: Duration | None = None
    round_robin: RoundRobin | None = None
    least_request: LeastRequest | None = None
    random: Empty | None = None
    ring_hash: RingHash | None = None
    maglev: Empty | None = None
    locality_weighted_lb_config: Empty | None = None
    use_hostname_for_hashing: bool | None = None
    close_connections_on_host_set_change: bool = False


class HashCookie(Model):
    name: str = ""
    ttl: Duration | None = None
    path: str = ""


class HashPolicy(Model):
    """One of `header`, `cookie` and `sourceIp`."""

    header: str | None = None
    cookie: HashCookie | None = None
    source_ip: bool | None = None
    terminal: bool = False


class RouteActionHashConfig(Model):
    hash_policies: list[HashPolicy] = []
