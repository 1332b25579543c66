"""Load balancing: the policy a cluster uses to pick an endpoint, its subsets, and what a
route's hashing policy hashes (for `ring_hash` and `maglev`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class SlowStart:
    window_ms: int | None = None
    aggression: float | None = None
    min_weight_percent: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadBalancer:
    policy: Literal["round_robin", "least_request", "random", "ring_hash", "maglev"] = "round_robin"
    #: Least request: how many random endpoints are compared.
    choice_count: int | None = None
    slow_start: SlowStart | None = None
    minimum_ring_size: int | None = None
    maximum_ring_size: int | None = None
    use_hostname_for_hashing: bool = False
    #: Percent of healthy endpoints under which health is ignored (Envoy's default 50).
    healthy_panic_threshold: float | None = None
    update_merge_window_ms: int | None = None
    locality_weighted: bool = False
    close_connections_on_host_set_change: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SubsetSelector:
    keys: tuple[str, ...]
    single_host_per_subset: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SubsetConfig:
    """Subsets over endpoint labels; a route names one by its labels' values."""

    selectors: tuple[SubsetSelector, ...]
    fallback: Literal["ANY_ENDPOINT", "DEFAULT_SUBSET", "NO_FALLBACK"] = "ANY_ENDPOINT"
    default_subset: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class HashPolicy:
    """One of `header`, `cookie` (with an optional generated cookie's TTL and path) and
    `source_ip`. `terminal`: stop at the first policy that yields a key."""

    header: str | None = None
    cookie: str | None = None
    cookie_ttl_ms: int | None = None
    cookie_path: str | None = None
    source_ip: bool = False
    terminal: bool = False
