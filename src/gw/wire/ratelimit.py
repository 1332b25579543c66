"""What the rate-limit server is configured with: each RateLimitConfig's descriptor tree.

Stage 1 builds a `RateLimitConfig` per RateLimitConfig resource; the control plane serves it
over xDS to the role `<namespace>~ratelimit` (`structs`), and the rate-limit server reads it
back into these same types. What Envoy is told (the descriptor actions, local buckets, the
server's cluster) is the translator's IR, not part of this contract; the two meet in the
descriptors Envoy sends: `DOMAIN`, then `CONFIG_KEY`, then the config's entries. Plain frozen
dataclasses: no API models, no protobuf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The rate-limit domain of every descriptor Envoy sends (one filter, one domain).
DOMAIN = "gw"
#: The descriptor entry Envoy puts first for a RateLimitConfig's actions, valued
#: `<namespace>.<name>`: the server finds that config's descriptor tree under it, so two
#: configs never share a counter even when their descriptors are spelled the same.
CONFIG_KEY = "gw.rlc"

Unit = Literal["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"]
#: Fixed-window lengths (a month is 30 days, a year 365, as in Envoy's reference server).
UNIT_SECONDS: dict[str, int] = {
    "SECOND": 1,
    "MINUTE": 60,
    "HOUR": 3600,
    "DAY": 86_400,
    "WEEK": 604_800,
    "MONTH": 2_592_000,
    "YEAR": 31_536_000,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Limit:
    unit: Unit
    requests_per_unit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Descriptor:
    """`value` None matches any value (each value has its own counter). A request's
    descriptor is limited by the node its last entry reaches, if that node has a limit."""

    key: str
    value: str | None = None
    limit: Limit | None = None
    descriptors: tuple[Descriptor, ...] = ()
    weight: int = 0
    always_apply: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitConfig:
    """One RateLimitConfig's descriptors, addressed by `config_id` (`<namespace>.<name>`)."""

    config_id: str
    namespace: str
    name: str
    descriptors: tuple[Descriptor, ...]
