"""`loadBalancerConfig` (Upstream) → `ir.LoadBalancer`, and `lbHash` (route) →
`ir.HashPolicy`s.

Checked against what Envoy accepts, so that a bad value is a status on the resource rather
than a cluster Envoy refuses: one policy at most, a panic threshold that is a percentage,
least-request choices of at least 2, ring sizes up to 8M with the minimum not above the
maximum, a positive slow-start aggression.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from gw.api.duration import optional_ms
from gw.api.loadbalancer import LoadBalancerConfig, RouteActionHashConfig, SlowStartConfig
from gw.translator import ir
from gw.translator.gateway.headers import header_name_problem
from gw.translator.reports import ResourceReport

Policy = Literal["round_robin", "least_request", "random", "ring_hash", "maglev"]
#: Policies by field name, as the manifests spell them, and as the IR does.
POLICIES: dict[str, Policy] = {
    "roundRobin": "round_robin",
    "leastRequest": "least_request",
    "random": "random",
    "ringHash": "ring_hash",
    "maglev": "maglev",
}
#: Envoy's bound on both ring sizes.
MAX_RING_SIZE = 8_388_608
#: Envoy's minimumRingSize when none is set.
DEFAULT_MIN_RING_SIZE = 1024
#: Locality weighting makes Envoy's hashing balancers place only hosts of localities that
#: have a weight, and an Upstream's own hosts never have one (failover localities can): the
#: table is empty while those hosts take the traffic. Envoy accepts the cluster, so this is
#: a warning, not a rejection.
_UNWEIGHTED_RING = (
    "{0} with localityWeightedLbConfig hashes only onto hosts of localities that have a "
    "loadBalancingWeight, and this upstream's own hosts have none (only failover localities "
    "can): Envoy's table of hosts is empty and requests get 503 'no healthy upstream'; remove "
    "localityWeightedLbConfig, or use roundRobin, leastRequest or random, which then balance "
    "over all hosts"
)


def build_load_balancer(
    config: LoadBalancerConfig | None, field: str, report: ResourceReport
) -> ir.LoadBalancer | None:
    """The policy and its settings, or None when unset or wrong (reported)."""
    if config is None:
        return None
    errors = len(report.errors)
    set_policies = (
        ("roundRobin", config.round_robin),
        ("leastRequest", config.least_request),
        ("random", config.random),
        ("ringHash", config.ring_hash),
        ("maglev", config.maglev),
    )
    chosen = [name for name, value in set_policies if value is not None]
    if len(chosen) > 1:
        report.error(field, f"set one load balancing policy, not {' and '.join(chosen)}")
    threshold = config.healthy_panic_threshold
    if threshold is not None and not 0 <= threshold <= 100:
        report.error(
            f"{field}.healthyPanicThreshold",
            f"{threshold} is not a percentage between 0 and 100",
        )
    policy: Policy = POLICIES[chosen[0]] if chosen else "round_robin"
    balancer = ir.LoadBalancer(
        policy=policy,
        healthy_panic_threshold=threshold,
        update_merge_window_ms=optional_ms(config.update_merge_window),
        locality_weighted=config.locality_weighted_lb_config is not None,
        use_hostname_for_hashing=bool(config.use_hostname_for_hashing)
        and policy in ("ring_hash", "maglev"),
        close_connections_on_host_set_change=config.close_connections_on_host_set_change,
    )
    balancer = _with_policy_settings(balancer, config, field, report)
    if balancer.locality_weighted and chosen and policy in ("ring_hash", "maglev"):
        report.warning(f"{field}.localityWeightedLbConfig", _UNWEIGHTED_RING.format(chosen[0]))
    if config.use_hostname_for_hashing and policy not in ("ring_hash", "maglev"):
        report.warning(
            f"{field}.useHostnameForHashing",
            "applies to the ringHash and maglev policies only, which hash hosts",
        )
    return balancer if len(report.errors) == errors else None


def _with_policy_settings(
    balancer: ir.LoadBalancer, config: LoadBalancerConfig, field: str, report: ResourceReport
) -> ir.LoadBalancer:
    if config.round_robin is not None:
        slow = _slow_start(config.round_robin.slow_start_config, f"{field}.roundRobin", report)
        return replace(balancer, slow_start=slow)
    if config.least_request is not None:
        where = f"{field}.leastRequest"
        choices = config.least_request.choice_count
        if choices == 1:
            report.error(
                f"{where}.choiceCount", "choiceCount must be at least 2 (0: the default 2)"
            )
        slow = _slow_start(config.least_request.slow_start_config, where, report)
        return replace(balancer, choice_count=choices or None, slow_start=slow)
    if config.ring_hash is not None and config.ring_hash.ring_hash_config is not None:
        ring = config.ring_hash.ring_hash_config
        where = f"{field}.ringHash.ringHashConfig"
        for name, size in (
            ("minimumRingSize", ring.minimum_ring_size),
            ("maximumRingSize", ring.maximum_ring_size),
        ):
            if size > MAX_RING_SIZE:
                report.error(f"{where}.{name}", f"{size} is above Envoy's limit {MAX_RING_SIZE}")
        if ring.minimum_ring_size and ring.maximum_ring_size:
            if ring.minimum_ring_size > ring.maximum_ring_size:
                report.error(
                    where,
                    f"minimumRingSize {ring.minimum_ring_size} is above maximumRingSize "
                    f"{ring.maximum_ring_size}",
                )
        elif 0 < ring.maximum_ring_size < DEFAULT_MIN_RING_SIZE:
            # Envoy compares it with its default minimum and refuses the whole update.
            report.error(
                f"{where}.maximumRingSize",
                f"{ring.maximum_ring_size} is below the minimum ring size "
                f"{DEFAULT_MIN_RING_SIZE} (Envoy's default for minimumRingSize): set "
                "minimumRingSize too, or raise maximumRingSize",
            )
        return replace(
            balancer,
            minimum_ring_size=ring.minimum_ring_size or None,
            maximum_ring_size=ring.maximum_ring_size or None,
        )
    return balancer


def _slow_start(
    config: SlowStartConfig | None, field: str, report: ResourceReport
) -> ir.SlowStart | None:
    if config is None:
        return None
    where = f"{field}.slowStartConfig"
    if config.aggression is not None and config.aggression <= 0:
        report.error(f"{where}.aggression", f"aggression must be above 0, not {config.aggression}")
    percent = config.min_weight_percent
    if percent is not None and not 0 <= percent <= 100:
        report.error(f"{where}.minWeightPercent", f"{percent} is not a percentage (0 to 100)")
    return ir.SlowStart(
        window_ms=optional_ms(config.slow_start_window),
        aggression=config.aggression,
        min_weight_percent=percent,
    )


def build_hash_policies(
    config: RouteActionHashConfig | None, field: str, report: ResourceReport
) -> tuple[ir.HashPolicy, ...] | None:
    """What the route's hashing load balancer hashes; None when unset, empty or wrong
    (reported)."""
    if config is None:
        return None
    out = []
    for i, policy in enumerate(config.hash_policies):
        where = f"{field}.hashPolicies[{i}]"
        kinds = [
            name
            for name, value in (
                ("header", policy.header),
                ("cookie", policy.cookie),
                ("sourceIp", policy.source_ip or None),
            )
            if value is not None
        ]
        if len(kinds) != 1:
            report.error(where, "a hash policy needs exactly one of header, cookie and sourceIp")
            continue
        if policy.header is not None:
            problem = None if policy.header.startswith(":") else header_name_problem(policy.header)
            if problem is not None:
                report.error(f"{where}.header", problem)
                continue
            out.append(ir.HashPolicy(header=policy.header.lower(), terminal=policy.terminal))
        elif policy.cookie is not None:
            if not policy.cookie.name:
                report.error(f"{where}.cookie.name", "the cookie needs a name")
                continue
            out.append(
                ir.HashPolicy(
                    cookie=policy.cookie.name,
                    cookie_ttl_ms=optional_ms(policy.cookie.ttl),
                    cookie_path=policy.cookie.path or None,
                    terminal=policy.terminal,
                )
            )
        else:
            out.append(ir.HashPolicy(source_ip=True, terminal=policy.terminal))
    return tuple(out) if out and len(out) == len(config.hash_policies) else None
