"""Rate limits in the IR: what Envoy is told (descriptor actions, local token buckets, the
rate-limit server's cluster).

What the rate-limit server itself is configured with (each RateLimitConfig's descriptor
tree) is not IR but a contract with that server: `gw.wire.ratelimit`. Plain frozen
dataclasses: no API models, no protobuf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class HeaderCondition:
    """A header test of `headerValueMatch`: `kind` `present` ignores `value`."""

    name: str
    kind: Literal["exact", "prefix", "suffix", "regex", "present"]
    value: str = ""
    invert: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """One descriptor entry. `request_headers` reads `header_name` into `descriptor_key`;
    `generic_key` and `header_value_match` add `descriptor_value` (the latter only when the
    `headers` match as `expect_match` says); `remote_address` and `destination_cluster`
    add the client address and the route's cluster."""

    kind: Literal[
        "generic_key", "request_headers", "remote_address", "header_value_match",
        "destination_cluster",
    ]  # fmt: skip
    descriptor_key: str = ""
    descriptor_value: str = ""
    header_name: str = ""
    skip_if_absent: bool = False
    expect_match: bool = True
    headers: tuple[HeaderCondition, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """One descriptor Envoy sends: the entries of `actions`, in order (Envoy sends none
    when an action cannot produce its entry, e.g. a missing header)."""

    actions: tuple[Action, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalLimit:
    """A token bucket in each Envoy: `max_tokens`, refilled by `tokens_per_fill` every
    `fill_interval_ms`."""

    max_tokens: int
    tokens_per_fill: int
    fill_interval_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CountLimit:
    unit: Literal["SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR"]
    requests_per_unit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BasicLimits:
    """`ratelimitBasic` of a host or route, counted under `scope` (unique in its
    VirtualService): `authorized` per user id (the header the extauth server sets),
    `anonymous` per client address (requests without one)."""

    scope: str
    authorized: CountLimit | None = None
    anonymous: CountLimit | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimits:
    """A virtual host's or route's limits: `policies` (`rateLimitConfigs` or inline
    `ratelimit`, checked where Settings `rateLimitBeforeAuth` says), `early` (always before
    authentication), `regular` (always after authorization), `basic` (after authorization),
    and the local bucket. A route's replace its host's in each filter (Envoy's most specific
    per-filter config wins), but for the places in `include_host` (`includeVhRateLimits`),
    where the host's are added to the route's."""

    policies: tuple[Policy, ...] = ()
    early: tuple[Policy, ...] = ()
    regular: tuple[Policy, ...] = ()
    local: LocalLimit | None = None
    basic: BasicLimits | None = None
    include_host: tuple[Literal["policies", "early", "regular"], ...] = ()

    @property
    def has_global(self) -> bool:
        return bool(self.policies or self.early or self.regular or self.basic)


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitServer:
    """Settings `ratelimitServer`: the gRPC cluster of the server (None when Settings name
    none: local limits only) and how Envoy calls it."""

    cluster: str | None = None
    timeout_ms: int = 100
    deny_on_fail: bool = False
    x_ratelimit_headers: bool = False
    before_auth: bool = False
    #: Settings `extauth.userIdHeader`: where the extauth server puts the user it identified
    #: (`ratelimitBasic` counts authorized requests by it).
    user_id_header: str = "x-user-id"
    #: The `:authority` of its gRPC calls (empty: the cluster's name).
    authority: str = ""
