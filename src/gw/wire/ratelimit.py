"""What the rate-limit server is configured with: descriptor trees and set rules, one
`RateLimitConfig` each.

Stage 1 builds one per RateLimitConfig resource (`<namespace>.<name>`), one for Settings
`ratelimit` (`SETTINGS_CONFIG`, what inline `rateLimits` actions are matched against) and one
per VirtualService with `ratelimitBasic` (`basic_config_id`); the control plane serves them
over xDS to the role `<namespace>~ratelimit` (`structs`), and the rate-limit server reads them
back into these same types. What Envoy is told (the descriptor actions, local buckets, the
server's cluster) is the translator's IR, not part of this contract; the two meet in the
descriptors Envoy sends: `DOMAIN`, then a first entry naming the config (`CONFIG_KEY`: its
tree, in order; `SET_CONFIG_KEY`: its set rules, in any order), then the request's entries.
Plain frozen dataclasses: no API models, no protobuf.
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
#: The first entry of a set-style descriptor (`setActions`): the rest is matched, as a set,
#: against the named config's `set_descriptors`.
SET_CONFIG_KEY = "gw.rlc.set"
#: The config of Settings `ratelimit` (no RateLimitConfig can have this id: it has no dot).
SETTINGS_CONFIG = "gw:settings"
#: Entries of `ratelimitBasic` descriptors: the scope (`host`, or a route's), the user id,
#: and the marker of a request without one (then the client address follows).
BASIC_SCOPE_KEY = "gw.basic"
BASIC_USER_KEY = "gw.user"
BASIC_ANONYMOUS_KEY = "gw.anonymous"

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
class SimpleDescriptor:
    """An entry a set rule needs: `key`, with `value` (None: any value, counted apart)."""

    key: str
    value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SetDescriptor:
    """A set rule: matches a set-style descriptor that holds all of `simple_descriptors`.
    Rules are tried in order and the first match counts, and so does every later match
    marked `always_apply`."""

    simple_descriptors: tuple[SimpleDescriptor, ...] = ()
    limit: Limit | None = None
    always_apply: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitConfig:
    """One config's descriptors and set rules, addressed by `config_id`: `<namespace>.<name>`
    of a RateLimitConfig, `SETTINGS_CONFIG`, or `basic_config_id(...)`."""

    config_id: str
    namespace: str
    name: str
    descriptors: tuple[Descriptor, ...]
    set_descriptors: tuple[SetDescriptor, ...] = ()


def basic_config_id(namespace: str, name: str) -> str:
    """The config of one VirtualService's `ratelimitBasic` limits."""
    return f"gw:basic:{namespace}.{name}"
